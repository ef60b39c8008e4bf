package owndir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUploadName(t *testing.T) {
	for _, tc := range []struct{ in, base, ext string }{
		{"notes.txt", "notes", ".txt"},
		{"отчёт.pdf", "отчёт", ".pdf"},
		{"报告 2024.docx", "报告_2024", ".docx"},
		{"../../etc/passwd", "passwd", ""},
		{`..\..\boot.ini`, "boot", ".ini"},
		{"x.tar.gz", "x.tar", ".gz"},
		{".bashrc", "bashrc", ""},
		{"..", "file", ""},
		{"", "file", ""},
		{"a\u202egnp.exe", "a_gnp", ".exe"}, // a right-to-left override is not kept
		{"tab\there\x00.md", "tab_here", ".md"},
		{"name.with space", "name.with_space", ""},
		{"data.verylongextensionname", "data.verylongextensionname", ""},
	} {
		base, ext := UploadName(tc.in)
		assert.Equal(t, tc.base, base, "base of %q", tc.in)
		assert.Equal(t, tc.ext, ext, "extension of %q", tc.in)
	}
	base, ext := UploadName(strings.Repeat("я", 300) + ".pdf")
	assert.LessOrEqual(t, len(base), MaxUploadBase)
	assert.True(t, utf8.ValidString(base), "cut on a rune boundary")
	assert.Equal(t, ".pdf", ext, "capping never cuts the extension")
}

func TestSaveUploadNeverOverwrites(t *testing.T) {
	workdir := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p1, n1, err := SaveUpload(workdir, "отчёт.pdf", strings.NewReader("first"), 100, at)
	require.NoError(t, err)
	p2, _, err := SaveUpload(workdir, "отчёт.pdf", strings.NewReader("second"), 100, at)
	require.NoError(t, err)
	assert.Equal(t, int64(5), n1)
	assert.Equal(t, filepath.Join(workdir, ".untether/uploads/20260102-030405-отчёт.pdf"), p1)
	assert.Equal(t, filepath.Join(workdir, ".untether/uploads/20260102-030405-отчёт-2.pdf"), p2)
	for p, want := range map[string]string{p1: "first", p2: "second"} {
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	fi, err := os.Stat(p1)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestSaveUploadStaysInsideTheUploadsDir(t *testing.T) {
	for _, link := range []string{".untether", ".untether/uploads"} {
		t.Run(link, func(t *testing.T) {
			workdir, outside := t.TempDir(), t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(workdir, link)), 0o700))
			require.NoError(t, os.Symlink(outside, filepath.Join(workdir, link)))
			_, _, err := SaveUpload(workdir, "x.txt", strings.NewReader("x"), 100, time.Now())
			require.Error(t, err)
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing written through the symlink")
		})
	}
	t.Run("a planted file symlink is not followed", func(t *testing.T) {
		workdir, outside := t.TempDir(), t.TempDir()
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		dir := filepath.Join(workdir, Uploads)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		target := filepath.Join(outside, "victim")
		require.NoError(t, os.WriteFile(target, []byte("keep"), 0o600))
		require.NoError(t, os.Symlink(target, filepath.Join(dir, "20260102-030405-x.txt")))
		p, _, err := SaveUpload(workdir, "x.txt", strings.NewReader("x"), 100, at)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, "20260102-030405-x-2.txt"), p)
		got, err := os.ReadFile(target)
		require.NoError(t, err)
		assert.Equal(t, "keep", string(got))
	})
}

func TestSaveUploadNeverRecreatesAMissingWorkdir(t *testing.T) {
	workdir := filepath.Join(t.TempDir(), "project")
	_, _, err := SaveUpload(workdir, "x.txt", strings.NewReader("x"), 100, time.Now())
	assert.ErrorIs(t, err, ErrWorkdirGone)
	assert.NoDirExists(t, workdir)
	n, err := PruneUploads(workdir, time.Hour, time.Now())
	assert.NoError(t, err)
	assert.Zero(t, n)
	assert.NoDirExists(t, workdir)
}

func TestSaveUploadTooBigKeepsNothing(t *testing.T) {
	workdir := t.TempDir()
	_, _, err := SaveUpload(workdir, "big.bin", bytes.NewReader(make([]byte, 11)), 10, time.Now())
	assert.True(t, errors.Is(err, ErrTooBig), "%v", err)
	entries, err := os.ReadDir(filepath.Join(workdir, Uploads))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestPruneUploads(t *testing.T) {
	workdir := t.TempDir()
	dir := filepath.Join(workdir, Uploads)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o700))
	now := time.Now()
	for name, age := range map[string]time.Duration{"old.txt": 800 * time.Hour, "new.txt": time.Hour} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(name), 0o600))
		require.NoError(t, os.Chtimes(p, now.Add(-age), now.Add(-age)))
	}
	outside := filepath.Join(t.TempDir(), "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("x"), 0o600))
	require.NoError(t, os.Chtimes(outside, now.Add(-900*time.Hour), now.Add(-900*time.Hour)))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link.txt")))
	old := now.Add(-900 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "sub"), old, old))

	n, err := PruneUploads(workdir, 720*time.Hour, now)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.NoFileExists(t, filepath.Join(dir, "old.txt"))
	assert.FileExists(t, filepath.Join(dir, "new.txt"))
	assert.DirExists(t, filepath.Join(dir, "sub"), "only regular files are pruned")
	assert.FileExists(t, outside, "a symlink is neither followed nor its target removed")
}
