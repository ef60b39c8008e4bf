package runner

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
)

// TestedVersion is the CLI version CI runs against (the pin of
// scripts/install-claude.sh).
const TestedVersion = "2.1.328"

// TestedRange is the range of CLI versions the whole real-CLI suite passed
// on (`make conformance CLAUDE_VERSION=x.y.z`), as the README's "Supported
// Claude Code versions" records it. Widen it only after a conformance run
// passed on the new bound.
var TestedRange = VersionRange{Min: "2.1.328", Max: "2.1.332"}

var (
	versionRe      = regexp.MustCompile(`\d+\.\d+\.\d+`)
	versionPartsRe = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)
)

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

// VersionRange is an inclusive range of x.y.z versions.
type VersionRange struct {
	Min, Max string
}

// String is "2.1.328–2.1.332", or one version when the bounds are equal.
func (r VersionRange) String() string {
	if r.Min == r.Max {
		return r.Min
	}
	return r.Min + "–" + r.Max
}

// VersionFit says where a version lies relative to a VersionRange.
type VersionFit int

// The places a version can have relative to a range.
const (
	VersionInRange VersionFit = iota
	VersionOlder
	VersionNewer
)

// Fit places v (x.y.z; anything after the third number is ignored) against r.
func (r VersionRange) Fit(v string) (VersionFit, error) {
	got, err := parseVersion(v)
	if err != nil {
		return 0, err
	}
	lo, err := parseVersion(r.Min)
	if err != nil {
		return 0, err
	}
	hi, err := parseVersion(r.Max)
	if err != nil {
		return 0, err
	}
	switch {
	case compareVersions(got, lo) < 0:
		return VersionOlder, nil
	case compareVersions(got, hi) > 0:
		return VersionNewer, nil
	}
	return VersionInRange, nil
}

type version [3]int

func parseVersion(s string) (version, error) {
	m := versionPartsRe.FindStringSubmatch(s)
	if m == nil {
		return version{}, fmt.Errorf("parse CLI version %q: want x.y.z", s)
	}
	var v version
	for i := range v {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return version{}, fmt.Errorf("parse CLI version %q: %w", s, err)
		}
		v[i] = n
	}
	return v, nil
}

func compareVersions(a, b version) int { return slices.Compare(a[:], b[:]) }
