package bridge_test

import (
	"bytes"
	"image"
	"image/color"
	pngenc "image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

func (r *rig) uploads() map[string]string {
	r.t.Helper()
	out := map[string]string{}
	dir := filepath.Join(r.claude.Workdir, ".untether", "uploads")
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return out
	}
	require.NoError(r.t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(r.t, err)
		out[e.Name()] = string(data)
	}
	return out
}

func (r *rig) sendDoc(name string, data []byte, caption string) telegramtest.Message {
	return r.tg.UserSendsDocument(telegramtest.ChatID(alice), telegramtest.User{ID: alice, FirstName: "Alice"}, name, "application/octet-stream", data, caption)
}

func TestUploadsKeepTheirNamesAndNeverOverwrite(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	first := r.sendDoc("отчёт.pdf", []byte("%PDF first"), "")
	second := r.sendDoc("отчёт.pdf", []byte("%PDF second"), "")
	r.finalAnswer(chat, first.ID, "отчёт")
	r.finalAnswer(chat, second.ID, "отчёт")
	got := r.uploads()
	require.Len(t, got, 2, "%v", got)
	var contents []string
	for name, data := range got {
		assert.Contains(t, name, "отчёт", "the Cyrillic name is kept")
		assert.True(t, strings.HasSuffix(name, ".pdf"), name)
		contents = append(contents, data)
	}
	assert.ElementsMatch(t, []string{"%PDF first", "%PDF second"}, contents)
	for name := range got {
		saw := false
		for _, c := range r.claude.API.ModelCalls() {
			saw = saw || c.AnyUserContains(name)
		}
		assert.True(t, saw, "Claude was told where %s is", name)
	}
}

// noisePNG is a PNG of random pixels, which does not compress: about
// 4·w·h bytes.
func noisePNG(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), 255})
		}
	}
	var buf bytes.Buffer
	require.NoError(t, pngenc.Encode(&buf, img))
	return buf.Bytes()
}

func TestLargeImageIsSavedNotInlined(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	big := noisePNG(t, 1200, 1100)
	require.Greater(t, len(big), 3_932_160, "above what fits in the API's 5 MB of base64")
	in := r.sendDoc("screenshot.png", big, "BIGIMAGE look")
	r.finalAnswer(chat, in.ID, "screenshot.png")
	got := r.uploads()
	require.Len(t, got, 1)
	for name, data := range got {
		assert.True(t, strings.HasSuffix(name, "-screenshot.png"), name)
		assert.Equal(t, string(big), data)
	}
	for _, c := range r.claude.API.ModelCalls() {
		if c.AnyUserContains("BIGIMAGE") {
			assert.NotContains(t, string(c.Body), `"type":"image"`, "not inlined")
		}
	}

	small := noisePNG(t, 64, 64)
	in2 := r.sendDoc("small.png", small, "SMALLIMAGE look")
	r.finalAnswer(chat, in2.ID, "echo: ")
	calls := r.claude.API.ModelCalls()
	last := string(calls[len(calls)-1].Body)
	assert.Contains(t, last, "SMALLIMAGE")
	assert.Contains(t, last, `"media_type":"image/png"`, "a small picture still goes inline")
	assert.Len(t, r.uploads(), 1, "and is not saved")
}

func TestUploadOverTheLimitIsRefused(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Files.MaxUploadMB = 1 }))
	in := r.sendDoc("dump.bin", bytes.Repeat([]byte{7}, 3<<19), "TOOBIG here")
	r.waitBot(chat, "refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "up to 1 MB ([files] max_upload_mb)")
	})
	r.sync("after the upload")
	assert.Empty(t, r.uploads())
	assert.False(t, r.modelSaw("TOOBIG"))
}

func TestUploadNeverRecreatesADeletedWorkdir(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	require.NoError(t, os.RemoveAll(r.claude.Workdir))
	in := r.sendDoc("notes.txt", []byte("remember"), "")
	r.waitBot(chat, "error", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "the project directory does not exist")
	})
	assert.NoDirExists(t, r.claude.Workdir)
}

// TestChatAnswersWhileAnUploadDownloads: the download runs off the actor,
// so /status is answered while it is slow.
func TestChatAnswersWhileAnUploadDownloads(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	warm := r.say(chat, alice, "warm up")
	r.finalAnswer(chat, warm.ID, "echo: warm up")
	r.tg.Delay("getFile", 3*time.Second)
	doc := r.sendDoc("notes.txt", []byte("remember the milk"), "")
	st := r.say(chat, alice, "/status")
	r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	r.finalAnswer(chat, doc.ID, "notes.txt")
	statusSeq, downloadSeq := 0, 0
	for _, c := range r.tg.Calls() {
		switch {
		case c.Method == "sendMessage" && strings.Contains(c.Params["text"], "Session status"):
			statusSeq = c.Seq
		case c.Method == telegramtest.FileDownload:
			downloadSeq = c.Seq
		}
	}
	require.NotZero(t, statusSeq)
	require.NotZero(t, downloadSeq)
	assert.Less(t, statusSeq, downloadSeq, "/status was answered before the file's download even began")
}

func TestOldUploadsArePrunedAtStart(t *testing.T) {
	r := newRig(t, withConfig(func(c *config.Config) { c.Files.Keep = config.Duration(24 * time.Hour) }))
	<-r.ready
	r.stop()
	dir := filepath.Join(r.claude.Workdir, ".untether", "uploads")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	old, recent := filepath.Join(dir, "old.txt"), filepath.Join(dir, "recent.txt")
	for _, p := range []string{old, recent} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
	}
	long := time.Now().Add(-25 * time.Hour)
	require.NoError(t, os.Chtimes(old, long, long))
	r.start()
	require.Eventually(t, func() bool { _, err := os.Stat(old); return os.IsNotExist(err) }, wait, 10*time.Millisecond)
	assert.FileExists(t, recent)
}
