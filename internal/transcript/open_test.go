package transcript

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRefuses: every reader refuses what is not a regular file, at once
// (a FIFO without a writer would block a plain open forever).
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	require.NoError(t, os.WriteFile(outside, []byte(`{"type":"user","uuid":"u1","message":{"content":"secret"}}`+"\n"), 0o600))
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(outside, link))
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sub := filepath.Join(dir, "sub.jsonl")
	require.NoError(t, os.Mkdir(sub, 0o700))

	readers := map[string]func(string) error{
		"Stamp":     func(p string) error { _, err := Stamp(p); return err },
		"Since":     func(p string) error { _, _, err := Since(p, Mark{}); return err },
		"Export":    func(p string) error { _, err := Export(p, ExportOptions{}); return err },
		"Summarise": func(p string) error { _, err := Summarise(p); return err },
	}
	for name, read := range readers {
		for _, p := range []string{link, fifo, sub} {
			t.Run(name+"/"+filepath.Base(p), func(t *testing.T) {
				err := read(p)
				assert.ErrorIs(t, err, ErrNotRegular)
			})
		}
		t.Run(name+"/missing", func(t *testing.T) {
			assert.ErrorIs(t, read(filepath.Join(dir, "missing.jsonl")), os.ErrNotExist)
		})
	}
}
