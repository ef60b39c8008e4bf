package claudetest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Converse runs one turn the way a person at a terminal would, outside
// untether: the CLI started through Command (in Workdir, with the offline
// environment) with args, one prompt, read up to its result. It returns the
// session id the result names, for tests of handing a session between the
// terminal and untether.
func (e *Env) Converse(ctx context.Context, prompt string, args ...string) (string, error) {
	cmd := e.Command(ctx, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", fmt.Errorf("converse: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", fmt.Errorf("converse: %w", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("converse: start the CLI: %w", err)
	}
	msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
	if _, err := stdin.Write(append(msg, '\n')); err != nil {
		return "", fmt.Errorf("converse: write the prompt: %w", err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	var result struct {
		Type      string `json:"type"`
		SessionID string `json:"session_id"`
		IsError   bool   `json:"is_error"`
	}
	for sc.Scan() {
		var f struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(sc.Bytes(), &f) == nil && f.Type == "result" {
			_ = json.Unmarshal(sc.Bytes(), &result)
			break
		}
	}
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case result.Type == "":
		return "", fmt.Errorf("converse: no result (exit %v): %s", waitErr, stderr.String())
	case result.IsError:
		return result.SessionID, errors.New("converse: the turn failed: " + stderr.String())
	case waitErr != nil:
		return result.SessionID, fmt.Errorf("converse: CLI exit: %w: %s", waitErr, stderr.String())
	}
	return result.SessionID, nil
}

// PersonPATH returns a new directory holding a program named claude, to put
// first on the PATH of a shell that runs a command line as a person would
// type it (untether's resume line): it runs the CLI with the offline
// environment (Vars), except that HOME, PATH and TERM are the caller's,
// whatever set them, and nothing else of the caller's environment reaches
// the CLI. So the line alone decides where the CLI keeps its sessions.
func (e *Env) PersonPATH() string {
	e.t.Helper()
	keys := make([]string, 0, len(e.Vars))
	for k := range e.Vars {
		if k != "HOME" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	script := `#!/bin/sh` + "\n" + `exec env -i HOME="$HOME" PATH="$PATH" TERM="${TERM:-dumb}"`
	for _, k := range keys {
		script += " " + shellQuote(k+"="+e.Vars[k])
	}
	script += " " + shellQuote(e.Binary) + ` "$@"` + "\n"
	dir := realTempDir(e.t)
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		e.t.Fatalf("claudetest: write the person's claude: %v", err)
	}
	return dir
}
