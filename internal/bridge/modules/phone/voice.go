package phone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/voice"
)

// Voice notes in. A voice note, an audio file or a video note is
// downloaded and transcribed ([voice]: an OpenAI-compatible endpoint or a
// local command) in the goroutine that hands messages to the CLI, in the
// order they came; the transcript is echoed (🎙 …) and goes to Claude
// prefixed "(voice note, transcribed)", with the caption and what the note
// replied to. A note that could not be transcribed is kept in the state
// directory for 24 hours, and the error message carries a 🔁 Retry button
// that works across restarts: its token names the kept file.

const (
	voiceDir  = "voice" // in the state directory
	voiceKeep = 24 * time.Hour
)

// voiceJob is a voice note on its way to Claude, and the sidecar of a kept
// one.
type voiceJob struct {
	ID       string    `json:"id"`
	Chat     int64     `json:"chat"`
	Thread   int       `json:"thread,omitempty"`
	MsgID    int       `json:"msg_id"`
	Kind     string    `json:"kind"` // "voice note", "audio file", "video note"
	FileID   string    `json:"file_id"`
	Name     string    `json:"name"`
	MimeType string    `json:"mime_type,omitempty"`
	Caption  string    `json:"caption,omitempty"`
	Quote    string    `json:"quote,omitempty"` // the reply context (replies.go)
	Received time.Time `json:"received"`
	From     int64     `json:"from,omitempty"` // who sent it
	Kept     bool      `json:"-"`
}

func (j voiceJob) key() state.ChatKey {
	return state.ChatKey{Chat: state.ChatID(j.Chat), Thread: state.ThreadID(j.Thread)}
}

// voiceError is a transcription that failed; the user gets its text with a
// Retry button.
type voiceError struct {
	job voiceJob
	err error
}

func (e *voiceError) Error() string { return "transcribe the " + e.job.Kind + ": " + e.err.Error() }
func (e *voiceError) Unwrap() error { return e.err }

// isVoice reports whether m carries audio to transcribe.
func isVoice(m *models.Message) bool {
	return m.Voice != nil || m.Audio != nil || m.VideoNote != nil
}

// voiceJobOf describes the audio of m; size is what Telegram announced.
func voiceJobOf(m *models.Message, key state.ChatKey) (voiceJob, int64) {
	j := voiceJob{ID: chat.NewToken(), Chat: int64(key.Chat), Thread: int(key.Thread), MsgID: m.ID, Caption: m.Caption, Received: time.Now(),
		From: int64(chat.SenderOf(m))}
	var size int64
	switch {
	case m.Voice != nil:
		j.Kind, j.FileID, j.Name, j.MimeType, size = "voice note", m.Voice.FileID, "voice.ogg", m.Voice.MimeType, m.Voice.FileSize
	case m.Audio != nil:
		j.Kind, j.FileID, j.Name, j.MimeType, size = "audio file", m.Audio.FileID, m.Audio.FileName, m.Audio.MimeType, m.Audio.FileSize
		if j.Name == "" {
			j.Name = "audio" + extByMime(m.Audio.MimeType)
		}
	case m.VideoNote != nil:
		j.Kind, j.FileID, j.Name, j.MimeType, size = "video note", m.VideoNote.FileID, "video-note.mp4", "video/mp4", int64(m.VideoNote.FileSize)
	}
	return j, size
}

func extByMime(mt string) string {
	switch mt {
	case "audio/mpeg":
		return ".mp3"
	case "audio/ogg":
		return ".ogg"
	case "audio/mp4", "audio/x-m4a":
		return ".m4a"
	case "audio/wav", "audio/x-wav":
		return ".wav"
	}
	return ".bin"
}

// voiceDisabledText answers a voice note when [voice] is not configured.
const voiceDisabledText = "🎙 Voice notes are not transcribed on this bot. To turn it on, set <code>[voice] api_url</code> " +
	"(an OpenAI-compatible transcription endpoint, with <code>api_key_env</code>) or <code>[voice] command</code> " +
	"(a local program such as whisper.cpp) in untether's config; until then, please type your message."

// onVoice queues a voice note, audio file or video note for Claude.
func (ph *Module) onVoice(c *chat.Chat, m *models.Message, quote string) {
	cfg := c.Config()
	if !cfg.Voice.Enabled() {
		c.Reply(voiceDisabledText, m.ID)
		return
	}
	job, size := voiceJobOf(m, c.Key())
	job.Quote = quote
	if size > cfg.Voice.MaxBytes() {
		c.Reply(fmt.Sprintf("🎙 This %s is %s; this bot transcribes up to %d MB (<code>[voice] max_mb</code>).", job.Kind, render.FormatSize(size), cfg.Voice.MaxMB), m.ID)
		return
	}
	ph.queueVoice(c, job)
}

func (ph *Module) queueVoice(c *chat.Chat, job voiceJob) {
	log, octx := *c.Log(), c.Ctx() // read on the actor: prepare runs off it
	c.SendOutgoing(chat.NewOutgoing(runner.UserInput{}, job.MsgID, state.UserID(job.From)).WithLabel("a " + job.Kind).
		PrepareWith(func(ctx context.Context) (runner.UserInput, error) { return ph.voiceInput(ctx, octx, job, log) }).
		OnFailed(func(err error) bool {
			if !errors.As(err, new(*voiceError)) {
				return false
			}
			ph.voiceFailed(c, err, job.MsgID) // the reason and a 🔁 Retry button
			return true
		}))
}

// voiceInput downloads (or reads the kept copy of) a voice note and
// transcribes it; it runs off the actor. octx carries the chat's logger
// for the outbox.
func (ph *Module) voiceInput(ctx, octx context.Context, job voiceJob, log zerolog.Logger) (runner.UserInput, error) {
	cfg := ph.host.Config()
	var data []byte
	var err error
	if job.Kept {
		data, err = os.ReadFile(keptPath(cfg, job.ID))
	} else {
		data, err = ph.downloadAll(ctx, job.FileID, cfg.Voice.MaxMB)
	}
	if err != nil {
		return runner.UserInput{}, &uploadError{fmt.Errorf("download the %s: %w", job.Kind, err)}
	}
	tctx, cancel := context.WithTimeout(ctx, cfg.Voice.Timeout.Std())
	text, err := transcriberOf(cfg).Transcribe(tctx, voice.Audio{Data: data, Name: job.Name, MimeType: job.MimeType})
	cancel()
	if err != nil {
		log.Warn().Err(err).Str("kind", job.Kind).Msg("transcription failed")
		if !job.Kept {
			if kerr := keepVoice(cfg, job, data); kerr != nil {
				log.Warn().Err(kerr).Msg("keep a voice note for a retry")
			} else {
				job.Kept = true
			}
		}
		return runner.UserInput{}, &voiceError{job: job, err: err}
	}
	if job.Kept {
		forgetVoice(cfg, job.ID)
	}
	log.Info().Str("kind", job.Kind).Int("chars", len(text)).Msg("transcribed")
	// From here, before the prompt reaches the CLI: the transcript comes
	// before the answer.
	ph.host.SendTo(octx, job.key(), outbox.High, outbox.Content{Text: "🎙 " + render.Italic(text)},
		outbox.SendOptions{ReplyTo: outbox.MessageID(job.MsgID), Silent: true})
	prompt := "(" + job.Kind + ", transcribed) " + text
	if job.Caption != "" {
		prompt += "\n\n" + job.Caption
	}
	return runner.UserInput{Text: job.Quote + prompt}, nil
}

// transcriberOf builds the configured backend. The API key goes only into
// the request header (voice.Endpoint keeps it out of errors).
func transcriberOf(cfg *config.Config) voice.Transcriber {
	v := cfg.Voice
	if v.APIURL != "" {
		return voice.Endpoint{URL: v.APIURL, Key: v.APIKey.Reveal(), Model: v.Model, Language: v.Language, Client: &http.Client{}}
	}
	return voice.Command{Argv: v.Command, FFmpeg: v.FFmpeg}
}

// downloadAll downloads a file a user sent, at most limitMB.
func (ph *Module) downloadAll(ctx context.Context, fileID string, limitMB int) ([]byte, error) {
	body, err := ph.host.Download(ctx, fileID, limitMB)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	limit := int64(limitMB) << 20
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("download the file: %w", ph.host.Redact(err))
	}
	if int64(len(data)) > limit {
		return nil, owndir.TooBig(limitMB)
	}
	return data, nil
}

// voiceFailed tells the user a transcription failed, with a Retry button.
func (ph *Module) voiceFailed(c *chat.Chat, err error, msgID int) {
	var ve *voiceError
	if !errors.As(err, &ve) {
		return
	}
	why := render.EscapeHTML(ve.err.Error())
	if errors.Is(ve.err, context.DeadlineExceeded) {
		why = "it took longer than <code>[voice] timeout</code> (" + render.EscapeHTML(c.Config().Voice.Timeout.String()) + ")"
	}
	text := "⚠️ Could not transcribe this " + render.EscapeHTML(ve.job.Kind) + ": " + why + "."
	var kb any
	if ve.job.Kept {
		text += " It is kept for 24 hours; press Retry to try again."
		kb = render.Keyboard{Rows: [][]render.Button{{{Text: "🔁 Retry", CallbackData: chat.CallbackData(btnRetryVoice, ve.job.ID)}}}}
	}
	c.SendMessage(outbox.High, outbox.Content{Text: text, Keyboard: kb}, outbox.SendOptions{ReplyTo: outbox.MessageID(msgID)})
}

func keptPath(cfg *config.Config, id string) string {
	return filepath.Join(cfg.State.Dir, voiceDir, id+".audio")
}

func sidecarPath(cfg *config.Config, id string) string {
	return filepath.Join(cfg.State.Dir, voiceDir, id+".json")
}

// keepVoice stores a note for a retry: the audio, then its description.
func keepVoice(cfg *config.Config, job voiceJob, data []byte) error {
	if err := os.MkdirAll(filepath.Join(cfg.State.Dir, voiceDir), 0o700); err != nil {
		return fmt.Errorf("keep the voice note: %w", err)
	}
	meta, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("keep the voice note: %w", err)
	}
	if err := os.WriteFile(keptPath(cfg, job.ID), data, 0o600); err != nil {
		return fmt.Errorf("keep the voice note: %w", err)
	}
	if err := os.WriteFile(sidecarPath(cfg, job.ID), meta, 0o600); err != nil {
		return fmt.Errorf("keep the voice note: %w", err)
	}
	return nil
}

func forgetVoice(cfg *config.Config, id string) {
	_ = os.Remove(sidecarPath(cfg, id))
	_ = os.Remove(keptPath(cfg, id))
}

// loadKept reads a kept note's description; one older than voiceKeep is
// deleted and reported as gone.
func loadKept(cfg *config.Config, id string) (voiceJob, error) {
	var job voiceJob
	if strings.ContainsAny(id, `/\.`) || id == "" {
		return job, fs.ErrNotExist
	}
	raw, err := os.ReadFile(sidecarPath(cfg, id))
	if err != nil {
		return job, err
	}
	if err := json.Unmarshal(raw, &job); err != nil {
		return job, fmt.Errorf("read the kept voice note: %w", err)
	}
	if time.Since(job.Received) > voiceKeep {
		forgetVoice(cfg, id)
		return job, fs.ErrNotExist
	}
	job.Kept = true
	return job, nil
}

// resolveVoiceRetry finds the kept voice note a 🔁 Retry press is for.
func (ph *Module) resolveVoiceRetry(_ context.Context, cq *models.CallbackQuery, token string) (state.ChatKey, func(*chat.Chat), string) {
	job, err := loadKept(ph.host.Config(), token)
	if err != nil {
		return state.ChatKey{}, nil, "This voice note is no longer kept (it was transcribed, or is older than 24 hours)."
	}
	return job.key(), func(c *chat.Chat) {
		notice := c.Message(cq.Message.Message.ID)
		c.EditMessage(notice, outbox.High, outbox.Content{Text: "🔁 Retrying the transcription of this " + render.EscapeHTML(job.Kind) + "…"})
		ph.queueVoice(c, job)
	}, ""
}

// pruneVoice deletes kept voice notes older than voiceKeep (loadKept
// refuses them even before).
func (ph *Module) pruneVoice(cfg *config.Config) {
	if _, err := owndir.PruneDir(cfg.State.Dir, voiceDir, voiceKeep, time.Now()); err != nil {
		ph.log.Warn().Err(err).Msg("prune kept voice notes")
	}
}

// sampleVoiceRetry keeps a voice note whose 🔁 Retry works
// (StoredButton.Sample).
func (ph *Module) sampleVoiceRetry(_ context.Context, key state.ChatKey) (string, error) {
	tok := chat.NewToken()
	job := voiceJob{ID: tok, Chat: int64(key.Chat), Thread: int(key.Thread), Kind: "voice note", Name: "voice.ogg", Received: time.Now()}
	return tok, keepVoice(ph.host.Config(), job, []byte("OggS"))
}
