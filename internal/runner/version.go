package runner

import (
	"bytes"
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
	// Through startOwned, so the orphan reaper never reaps it under Wait.
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Stdout = &out
	if err := startOwned(cmd); err != nil {
		return "", fmt.Errorf("run %s --version: %w", path, err)
	}
	if err := waitOwned(cmd); err != nil {
		return "", fmt.Errorf("run %s --version: %w", path, err)
	}
	v := versionRe.FindString(out.String())
	if v == "" {
		return "", fmt.Errorf("run %s --version: no version in %q", path, out.String())
	}
	return v, nil
}
