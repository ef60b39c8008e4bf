package runner

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
)

// TestedVersion is the CLI version the test suite runs against.
const TestedVersion = "2.1.328"

var versionRe = regexp.MustCompile(`\d+\.\d+\.\d+`)

// CLIVersion runs `binary --version` and returns the version number.
func CLIVersion(ctx context.Context, binary string) (string, error) {
	path, err := exec.LookPath(binary)
	if err != nil {
		return "", fmt.Errorf("find claude binary %q: %w", binary, err)
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", path, err)
	}
	v := versionRe.FindString(string(out))
	if v == "" {
		return "", fmt.Errorf("run %s --version: no version in %q", path, out)
	}
	return v, nil
}
