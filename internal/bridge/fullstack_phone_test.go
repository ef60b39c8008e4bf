package bridge_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/voice/voicefake"
)

// Voice notes, albums, forwards, replies and edits through the fake Bot
// API, the bridge and the real CLI.

var aliceUser = telegramtest.User{ID: alice, FirstName: "Alice", Username: "alice"}

// lastCallWith returns the body of the last model call whose user text
// contains marker.
func (r *rig) lastCallWith(marker string) string {
	r.t.Helper()
	body := ""
	for _, c := range r.claude.API.ModelCalls() {
		if c.AnyUserContains(marker) {
			body = string(c.Body)
		}
	}
	require.NotEmpty(r.t, body, "no model call carried %q", marker)
	return body
}

// callsWith counts the model calls whose last prompt contains text.
func (r *rig) callsWith(text string) int {
	n := 0
	for _, p := range r.prompts() {
		if strings.Contains(p, text) {
			n++
		}
	}
	return n
}

const voiceKey = "sk-voice-test-key-9876543210"

func TestVoiceNoteThroughTheEndpoint(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	srv := voicefake.New(t, voicefake.WithKey(voiceKey), voicefake.WithTranscript(func(r voicefake.Request) string {
		return "VOICEMARK please list the files"
	}))
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Voice.APIURL, c.Voice.APIKey, c.Voice.Model, c.Voice.Language = srv.URL(), config.NewSecret(voiceKey), "whisper-1", "en"
	}))
	ogg := []byte("OggS\x00fake opus voice note bytes")
	in := r.tg.UserSendsVoice(chat, aliceUser, ogg, 2, "")
	r.finalAnswer(chat, in.ID, "VOICEMARK please list the files")
	assert.Contains(t, r.prompts(), "(voice note, transcribed) VOICEMARK please list the files", "the transcript reached the model")
	echo := r.waitBot(chat, "echo", func(m telegramtest.Message) bool { return strings.HasPrefix(m.Text, "🎙") })
	assert.Equal(t, "🎙 VOICEMARK please list the files", echo.Text)
	assert.Equal(t, in.ID, echo.ReplyTo)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, ogg, reqs[0].Audio, "the note's bytes, as Telegram stored them")
	assert.Equal(t, "whisper-1", reqs[0].Model)
	assert.Equal(t, "en", reqs[0].Language)
	assert.Equal(t, "Bearer "+voiceKey, reqs[0].Auth)

	// The endpoint is down: the user is told, with a Retry button that
	// works once it is back.
	srv.FailNext(1, http.StatusServiceUnavailable)
	in2 := r.tg.UserSendsVoice(chat, aliceUser, []byte("OggS second note"), 3, "with a caption")
	fail := r.waitBot(chat, "failure", func(m telegramtest.Message) bool {
		return m.ReplyTo == in2.ID && strings.Contains(m.Text, "Could not transcribe")
	})
	assert.Contains(t, fail.Text, "HTTP 503")
	retry := buttonData(fail, "Retry")
	require.NotEmpty(t, retry)
	r.tg.UserPresses(chat, fail.ID, retry)
	r.finalAnswer(chat, in2.ID, "with a caption")
	assert.Contains(t, r.prompts(), "(voice note, transcribed) VOICEMARK please list the files\n\nwith a caption")
	reqs = srv.WaitRequests(t, 3, wait)
	assert.Equal(t, []byte("OggS second note"), reqs[2].Audio, "the retry sent the kept note")
	m, _ := r.tg.Snapshot().Message(chat, fail.ID)
	assert.Empty(t, m.Keyboard, "a used Retry button is gone")

	vn := r.tg.UserSendsVideoNote(chat, aliceUser, []byte("mp4 round video"), 4)
	r.finalAnswer(chat, vn.ID, "(video note, transcribed)")
	au := r.tg.UserSendsAudio(chat, aliceUser, "memo.m4a", "audio/mp4", []byte("m4a memo"), 30, "")
	r.finalAnswer(chat, au.ID, "(audio file, transcribed)")
	reqs = srv.Requests()
	require.Len(t, reqs, 5)
	assert.Equal(t, "video-note.mp4", reqs[3].FileName)
	assert.Equal(t, []byte("mp4 round video"), reqs[3].Audio)
	assert.Equal(t, "memo.m4a", reqs[4].FileName)
	assert.NotContains(t, r.logs.String(), voiceKey, "the voice key is never logged")
}

func TestVoiceNoteWithoutVoiceConfigSaysHowToEnableIt(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	in := r.tg.UserSendsVoice(chat, aliceUser, []byte("OggS"), 1, "")
	r.waitBot(chat, "how to enable", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "[voice] api_url") && strings.Contains(m.Text, "[voice] command")
	})
	r.sync("after the voice note")
	assert.Len(t, r.claude.API.ModelCalls(), 1, "nothing but the sync reached Claude")
}

// TestVoiceNoteThroughALocalCommand runs the real pipeline: espeak-ng
// speaks, ffmpeg makes the OGG/Opus note a phone would record, the bridge
// converts it back to WAV with ffmpeg and pocketsphinx transcribes it.
func TestVoiceNoteThroughALocalCommand(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	ogg := voicefake.SpokenOGG(t, "seven three nine")
	argv := voicefake.PocketsphinxCommand(t)
	r := newRig(t, withConfig(func(c *config.Config) { c.Voice.Command, c.Voice.FFmpeg = argv, "ffmpeg" }))
	in := r.tg.UserSendsVoice(chat, aliceUser, ogg, 2, "")
	r.finalAnswer(chat, in.ID, "transcribed")
	var heard string
	for _, p := range r.prompts() {
		if strings.Contains(p, "(voice note, transcribed)") {
			heard = p
		}
	}
	assert.True(t, voicefake.SaysInOrder(heard, "seven", "three", "nine"), "the model heard %q", heard)
}

func TestAlbumOfThreePhotosIsOneRequest(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	items := []telegramtest.AlbumItem{{Photo: noisePNG(t, 20, 20)}, {Photo: noisePNG(t, 30, 20)}, {Photo: noisePNG(t, 20, 30)}}
	parts := r.tg.UserSendsAlbum(chat, aliceUser, items, "ALBUMMARK which one is best?")
	// The CLI adds a text block naming each image after it, which the
	// fake model echoes; the request itself is what counts.
	r.finalAnswer(chat, parts[0].ID, "echo:")
	body := r.lastCallWith("ALBUMMARK")
	assert.Equal(t, 3, strings.Count(body, `"type":"image"`), "three image blocks in one request")
	assert.Len(t, r.claude.API.ModelCalls(), 1, "one request, not three")
	assert.Contains(t, body, `(The user sent an album: 3 pictures.)\n\nALBUMMARK which one is best?`)
}

func TestForwardsAndACommentAreOnePrompt(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	date := time.Date(2025, 5, 6, 7, 8, 0, 0, time.UTC)
	f1 := r.tg.UserSends(chat, aliceUser, "the build is red again", telegramtest.Forwarded(telegramtest.ForwardOrigin{
		Type: "user", Date: date, SenderUser: telegramtest.User{ID: 77, FirstName: "Bob", Username: "bob"}}))
	r.tg.UserSends(chat, aliceUser, "it fails on arm64 only", telegramtest.Forwarded(telegramtest.ForwardOrigin{Type: "hidden_user", SenderUserName: "Carol", Date: date}))
	r.tg.UserSends(chat, aliceUser, "FWDMARK can you look?")
	r.finalAnswer(chat, f1.ID, "forwarded 2 messages") // the fake model echoes the start
	require.Len(t, r.claude.API.ModelCalls(), 1, "one prompt for the forwards and the comment")
	prompt := r.prompts()[0]
	assert.Contains(t, prompt, "(The user forwarded 2 messages.)")
	assert.Contains(t, prompt, "── Forwarded from Bob (@bob), 6 May 2025 07:08 UTC ──\nthe build is red again")
	assert.Contains(t, prompt, "── Forwarded from Carol (their account is hidden), 6 May 2025 07:08 UTC ──\nit fails on arm64 only")
	assert.Contains(t, prompt, "── The user's comment ──\nFWDMARK can you look?")
}

func TestReplyCarriesItsQuote(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	first := r.say(chat, alice, "the deploy window is at noon, and the rollback plan is ready")
	answer := r.finalAnswer(chat, first.ID, "echo: the deploy window")
	in := r.tg.UserSends(chat, aliceUser, "QUOTEMARK move it to two", telegramtest.ReplyingTo(answer.ID), telegramtest.Quoting("the deploy window is at noon"))
	r.finalAnswer(chat, in.ID, "QUOTEMARK")
	assert.Contains(t, r.prompts(),
		"[The user is replying to this part of your (Claude's) earlier message, as untether showed it: “the deploy window is at noon”]\n\nQUOTEMARK move it to two")

	in3 := r.tg.UserSends(chat, aliceUser, "QUOTETHREE really?", telegramtest.ReplyingTo(answer.ID))
	r.finalAnswer(chat, in3.ID, "QUOTETHREE")
	assert.Contains(t, r.prompts(), "[The user is replying to your (Claude's) earlier message, as untether showed it: "+
		"“echo: the deploy window is at noon, and the rollback plan is ready”]\n\nQUOTETHREE really?", "without the answer's ⏱ footer")

	in2 := r.tg.UserSends(chat, aliceUser, "QUOTETWO and this?", telegramtest.ReplyingTo(first.ID))
	r.finalAnswer(chat, in2.ID, "QUOTETWO")
	assert.Contains(t, r.prompts(),
		"[The user is replying to their own earlier message: “the deploy window is at noon, and the rollback plan is ready”]\n\nQUOTETWO and this?")
}

func TestEditedMessageIsNotSilentlyResent(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	in := r.say(chat, alice, "rename the fucntion")
	r.finalAnswer(chat, in.ID, "echo: rename the fucntion")
	r.tg.UserEdits(chat, in.ID, "EDITMARK rename the function")
	notice := r.waitBot(chat, "edit notice", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "You edited this message")
	})
	r.sync("after the edit")
	assert.False(t, r.modelSaw("EDITMARK"), "an edit is not a new prompt by itself")
	send := buttonData(notice, "Send edited version")
	require.NotEmpty(t, send)
	r.tg.UserPresses(chat, notice.ID, send)
	r.finalAnswer(chat, in.ID, "echo: EDITMARK rename the function")
	assert.Equal(t, 1, r.callsWith("EDITMARK"))
	m, _ := r.tg.Snapshot().Message(chat, notice.ID)
	assert.Empty(t, m.Keyboard)
	assert.Contains(t, m.Text, "the edited version was sent")
}

// TestAlbumInAMentionGroupKeepsEveryPart: only the first part mentions the
// bot (the caption is there), yet the whole album is one prompt.
func TestAlbumInAMentionGroupKeepsEveryPart(t *testing.T) {
	r := newRig(t, withGroup(config.GroupTriggerMention))
	r.addTeam()
	caption, mention := mentioning("GROUPALBUM compare these")
	first := r.tg.UserSendsPhoto(team, aliceUser, noisePNG(t, 20, 20), caption, mention, telegramtest.InAlbum("g1"))
	r.tg.UserSendsPhoto(team, aliceUser, noisePNG(t, 30, 20), "", telegramtest.InAlbum("g1"))
	r.tg.UserSendsPhoto(team, aliceUser, noisePNG(t, 20, 30), "", telegramtest.InAlbum("g1"))
	r.tg.UserSendsPhoto(team, aliceUser, noisePNG(t, 20, 30), "", telegramtest.InAlbum("other"))
	r.finalAnswer(team, first.ID, "echo:")
	body := r.lastCallWith("GROUPALBUM")
	assert.Equal(t, 3, strings.Count(body, `"type":"image"`), "every part of the album, and only those")
	assert.Len(t, r.claude.API.ModelCalls(), 1)
}

// TestForwardsClaudeCannotStartAreNotReplayed: forwards and a comment
// whose Claude cannot start (its project directory is gone) get the
// error, and their updates are confirmed: a restart does not hand them in
// again, and the update offset moves past them. (The batch is refused
// before sendOutgoing's own start, so this does not reach the branch
// that confirms a held message there.)
func TestForwardsClaudeCannotStartAreNotReplayed(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	require.NoError(t, os.RemoveAll(r.claude.Workdir))
	date := time.Date(2025, 5, 6, 7, 8, 0, 0, time.UTC)
	r.tg.UserSends(chat, aliceUser, "the build is red again", telegramtest.Forwarded(telegramtest.ForwardOrigin{
		Type: "hidden_user", SenderUserName: "Carol", Date: date}))
	in := r.tg.UserSends(chat, aliceUser, "NOSTART can you look?")
	isError := func(m telegramtest.Message) bool { return strings.HasPrefix(m.Text, "⚠️ Claude could not start") }
	r.waitBot(chat, "the error", isError)
	require.NoError(t, os.MkdirAll(r.claude.Workdir, 0o755))
	last := int64(r.tg.Snapshot().UpdateOf(chat, in.ID))
	require.Eventually(t, func() bool {
		off, err := r.store.LastUpdateID(context.Background())
		return err == nil && off >= last
	}, 10*time.Second, 500*time.Millisecond, "the updates are confirmed")

	r.stop()
	r.start()
	next := r.say(chat, alice, "after the restart")
	r.finalAnswer(chat, next.ID, "echo: after the restart")
	assert.False(t, r.modelSaw("NOSTART"), "not replayed to Claude after the restart")
	n := 0
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		if isError(m) {
			n++
		}
	}
	assert.Equal(t, 1, n, "the error is said once")
}
