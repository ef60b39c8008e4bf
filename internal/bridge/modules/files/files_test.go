package files

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/pathglob"
)

func TestWithOutboxPrompt(t *testing.T) {
	key := state.ChatKey{Chat: -100123, Thread: 7}
	assert.Equal(t, ".untether/outbox/-100123_7", chatOutbox(key))
	note := outboxPrompt("/p", chatOutbox(key))
	assert.Contains(t, note, "/p/.untether/outbox/-100123_7/")

	got := withOutboxPrompt([]string{"--add-dir", "/x"}, "/p", key)
	assert.Equal(t, []string{"--add-dir", "/x", "--append-system-prompt", note}, got)
	got = withOutboxPrompt([]string{"--append-system-prompt", "Be brief."}, "/p", key)
	assert.Equal(t, []string{"--append-system-prompt", "Be brief.\n\n" + note}, got, "merged into the operator's own")
	got = withOutboxPrompt([]string{"--append-system-prompt=Be brief."}, "/p", key)
	assert.Equal(t, []string{"--append-system-prompt=Be brief.\n\n" + note}, got)
	orig := []string{"--append-system-prompt", "Be brief."}
	withOutboxPrompt(orig, "/p", key)
	assert.Equal(t, "Be brief.", orig[1], "the config's slice is not modified")
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))))
	return buf.Bytes()
}

func TestScanOutboxSortsFilesIntoPhotosDocumentsAndSkips(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, ".untether/outbox/1")
	require.NoError(t, os.MkdirAll(filepath.Join(out, "sub"), 0o700))
	write := func(name string, data []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(out, name), data, 0o600))
	}
	write("chart.png", pngBytes(t, 40, 30))
	write("strip.png", pngBytes(t, 10, 300)) // ratio over 20: Telegram refuses it as a photo
	write("fake.jpg", []byte("not a picture"))
	write("notes.md", []byte("# notes"))
	write("empty.txt", nil)
	big, err := os.Create(filepath.Join(out, "huge.bin"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(maxDocumentBytes+1)) // sparse
	big.Close()
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(out, "link")))

	root, err := owndir.Open(dir, ".untether/outbox/1", false)
	require.NoError(t, err)
	defer root.Close()
	files, more, err := scanOutbox(root, 10)
	require.NoError(t, err)
	assert.False(t, more)
	defer closeFiles(files)
	got := map[string]string{}
	for _, f := range files {
		switch {
		case f.skip != "":
			got[f.name] = "skip: " + f.skip
		case f.kind == outbox.MediaPhoto:
			got[f.name] = "photo"
		default:
			got[f.name] = "document"
		}
	}
	assert.Equal(t, map[string]string{
		"chart.png": "photo", "strip.png": "document", "fake.jpg": "document", "notes.md": "document",
		"empty.txt": "skip: is empty",
		"huge.bin":  "skip: is 50.0 MB, over the 50 MB Telegram lets a bot send",
		"link":      "skip: is a symbolic link; only regular files are sent",
		"sub":       "skip: is a directory; only files directly in the outbox directory are sent, and it is left where it is",
	}, got)
}

func TestResolveGet(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src/main.go"), []byte("package main"), 0o600))
	require.NoError(t, os.Symlink("src", filepath.Join(dir, "linkdir")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".untether/sent"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".untether/sent/20260102-030405-other-chat.txt"), []byte("another chat's"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".worktrees/fix/.untether/uploads"), 0o700))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "src/pipe"), 0o600))
	deny := config.DefaultDeny()
	tests := []struct {
		arg, rel, refusal string
	}{
		{"src/main.go", "src/main.go", ""},
		{" 'src/main.go' ", "src/main.go", ""},
		{filepath.Join(dir, "src/main.go"), "src/main.go", ""},
		{"./src/../src/main.go", "src/main.go", ""},
		{".", ".", ""},
		{"linkdir/main.go", "", "symbolic link"},
		{"../outside", "", "not inside the project"},
		{"/etc/passwd", "", "not inside the project"},
		{"src/.env.prod", "", "deny"},
		{"src/nope.go", "", "No such file"},
		{"src/main.go/x", "", "No such file"},
		{"src/pipe", "src/pipe", ""}, // found, and answered as neither file nor directory, without opening it
		// Untether's own files: uploads, and what was sent to every chat
		// of the project (issue 22 §9).
		{".untether/sent/20260102-030405-other-chat.txt", "", "untether's own files"},
		{".untether/sent", "", "untether's own files"},
		{".untether", "", "untether's own files"},
		{filepath.Join(dir, ".untether/sent"), "", "untether's own files"},
		{".worktrees/fix/.untether/uploads", "", "untether's own files"},
	}
	for _, tt := range tests {
		target, err := resolveGet(dir, tt.arg, deny)
		if tt.refusal == "" {
			require.NoError(t, err, tt.arg)
			assert.Equal(t, tt.rel, target.rel, tt.arg)
			if target.file != nil {
				target.file.Close()
			}
			continue
		}
		require.Error(t, err, tt.arg)
		assert.Contains(t, err.Error(), tt.refusal, tt.arg)
	}
	_, hit := pathglob.MatchAny(deny, "src/.env.prod")
	assert.True(t, hit)
}

func TestSettleMovedFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".untether/outbox/1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".untether/outbox/1/r.txt"), []byte("r"), 0o600))
	payload := `{"v":1,"chat":1,"files":[{"Kind":1,"Dir":"` + dir + `","Path":".untether/sent/x-r.txt","Fallback":".untether/outbox/1/r.txt","Name":"r.txt"}]}`
	entry := outbox.JournalEntry{ID: 1, Key: outbox.ChatKey{Chat: 1}, Kind: outbox.KindMedia, Payload: []byte(payload)}
	require.Len(t, outbox.MediaFiles(entry), 1)
	settleMovedFiles([]outbox.JournalEntry{entry, {ID: 2, Kind: outbox.KindSend, Payload: []byte(`{"v":1}`)}})
	assert.NoFileExists(t, filepath.Join(dir, ".untether/outbox/1/r.txt"))
	got, err := os.ReadFile(filepath.Join(dir, ".untether/sent/x-r.txt"))
	require.NoError(t, err)
	assert.Equal(t, "r", string(got))
}
