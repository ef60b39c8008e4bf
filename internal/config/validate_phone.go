package config

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/untether/untether/internal/pathglob"
)

// resolveVoice expands a leading ~/ in [voice] command's entries (no
// shell runs it) and reads api_key_env into APIKey. Setting both api_key
// and api_key_env is a mistake: one of them would silently lose.
func (c *Config) resolveVoice(env func(string) string, ps *problems) {
	v := &c.Voice
	for i, arg := range v.Command {
		if exp, ok := expandHome(arg, env("HOME")); ok {
			v.Command[i] = exp
		} else {
			ps.add("voice.command", "cannot expand ~ in entry %d because HOME is not set; use an absolute path", i)
		}
	}
	secretFromEnv(env, ps, "voice.api_key_env", "voice.api_key", v.APIKeyEnv, &v.APIKey)
}

// secretFromEnv reads the environment variable name (the value of key)
// into s. Setting both key and the secret itself (otherKey) is a mistake:
// one of them would silently lose.
func secretFromEnv(env func(string) string, ps *problems, key, otherKey, name string, s *Secret) {
	switch {
	case name == "":
	case !s.IsZero():
		ps.add(key, "set together with %s; use one of them", otherKey)
	case !envNamePattern.MatchString(name):
		ps.add(key, "%q is not a valid environment variable name", name)
	case env(name) == "":
		ps.add(key, "names %s, which is not set (or empty) in untether's environment", name)
	default:
		*s = NewSecret(env(name))
	}
}

// validatePhone checks the keys of files sent back, /get, voice notes,
// albums and forwards.
func (c *Config) validatePhone(ps *problems) {
	positive(ps, "files.outbox_keep", c.Files.OutboxKeep)
	if n := c.Files.MaxFilesPerTurn; n < 1 || n > MaxFilesPerTurnLimit {
		ps.add("files.max_files_per_turn", "is %d; must be between 1 and %d", n, MaxFilesPerTurnLimit)
	}
	for i, p := range c.Files.Deny {
		if err := pathglob.Valid(p); err != nil {
			ps.add("files.deny", "entry %d: %v", i, err)
		}
	}
	for _, k := range []struct {
		key string
		d   Duration
	}{{"telegram.album_wait", c.Telegram.AlbumWait}, {"telegram.forward_wait", c.Telegram.ForwardWait}} {
		if k.d <= 0 || k.d > MaxCollectWait {
			ps.add(k.key, "is %s; must be greater than zero and at most %s", k.d, MaxCollectWait)
		}
	}
	c.validateVoice(ps)
}

func (c *Config) validateVoice(ps *problems) {
	v := c.Voice
	if v.APIURL != "" && len(v.Command) > 0 {
		ps.add("voice.command", "set together with voice.api_url; choose one transcription backend")
	}
	if v.APIURL != "" {
		u, err := url.Parse(v.APIURL)
		switch {
		case err != nil:
			ps.add("voice.api_url", "not a URL: %v", err)
		case u.Scheme != "http" && u.Scheme != "https":
			ps.add("voice.api_url", "scheme must be http or https, got %q", u.Scheme)
		case u.Host == "":
			ps.add("voice.api_url", "must include a host, e.g. %q", "https://api.openai.com/v1/audio/transcriptions")
		case u.User != nil:
			ps.add("voice.api_url", "must not carry credentials; use voice.api_key or voice.api_key_env")
		case u.Scheme == "http" && !v.APIKey.IsZero() && !loopbackHost(u.Hostname()):
			ps.add("voice.api_url", "is plain http to %s, which would send voice.api_key unencrypted; use https", u.Hostname())
		}
		if strings.TrimSpace(v.Model) == "" {
			ps.add("voice.model", "must not be empty when voice.api_url is set, e.g. %q", DefaultVoiceModel)
		}
	}
	if len(v.Command) > 0 {
		switch name := v.Command[0]; {
		case strings.TrimSpace(name) == "":
			ps.add("voice.command", "the program (first entry) is empty")
		case strings.ContainsRune(name, filepath.Separator) && !filepath.IsAbs(name):
			ps.add("voice.command", "%q is a relative path; use a command name found on PATH or an absolute path", name)
		}
		if !strings.Contains(strings.Join(v.Command[1:], "\x00"), "{wav}") {
			ps.add("voice.command", "no argument contains {wav}, the converted voice note")
		}
		switch f := v.FFmpeg; {
		case f == "":
			ps.add("voice.ffmpeg", "must not be empty when voice.command is set; use %q to find it on PATH", DefaultVoiceFFmpeg)
		case strings.ContainsRune(f, filepath.Separator) && !filepath.IsAbs(f):
			ps.add("voice.ffmpeg", "%q is a relative path; use a command name found on PATH or an absolute path", f)
		}
	}
	if l := v.Language; l != "" && (len(l) < 2 || len(l) > 3 || strings.ToLower(l) != l || strings.IndexFunc(l, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0) {
		ps.add("voice.language", "is %q; use an ISO-639-1 code such as \"en\", or leave it empty to detect the language", l)
	}
	if v.MaxMB < 1 || v.MaxMB > MaxVoiceMB {
		ps.add("voice.max_mb", "is %d; must be between 1 and %d (what a bot may download from Telegram)", v.MaxMB, MaxVoiceMB)
	}
	positive(ps, "voice.timeout", v.Timeout)
	// The CLI runs tools that could read its environment.
	if key := v.APIKey.Reveal(); key != "" {
		for name, value := range c.Claude.Env {
			if strings.Contains(value, key) {
				ps.add(envKey+"."+quoteKey(name), "value contains voice.api_key; the Claude CLI must never see it")
			}
		}
	}
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
