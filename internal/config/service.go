package config

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/untether/untether/internal/service/hookprompt"
)

// HTTP configures the local HTTP listener: /metrics, /healthz, /readyz and
// the webhooks of [[triggers]] (POST /hooks/<name>).
type HTTP struct {
	// Listen is host:port to listen on, e.g. "127.0.0.1:9464"; empty
	// leaves the listener off.
	Listen string `toml:"listen"`
}

// Enabled reports whether the listener is on.
func (h HTTP) Enabled() bool { return h.Listen != "" }

// Trigger is one [[triggers]] entry: a webhook that starts a turn in a chat
// with a prompt made from the delivery's JSON body.
type Trigger struct {
	// Name is the webhook's path: POST /hooks/<name>.
	Name string `toml:"name"`
	// Secret is the HMAC-SHA256 key deliveries are signed with
	// (X-Hub-Signature-256). SecretEnv names an environment variable to
	// read it from instead; Parse resolves it into Secret.
	Secret    Secret `toml:"secret"`
	SecretEnv string `toml:"secret_env"`
	// ChatID is the chat the prompt runs in: a user's id for their private
	// chat, or a group's (negative) id. It must be allowed.
	ChatID int64 `toml:"chat_id"`
	// ThreadID is the forum topic, 0 for none.
	ThreadID int64 `toml:"thread_id"`
	// Project, when set, is where each run works, as for [[schedules]].
	Project string `toml:"project"`
	// Prompt is a Go text/template over the JSON body (see
	// internal/service/hookprompt); a missing key renders empty.
	Prompt string `toml:"prompt"`
}

// triggersKey is the list section of webhooks.
const triggersKey = "triggers"

// MinTriggerSecretLen is the shortest secret a trigger may have: the
// secret is all that stands between the internet and a turn of Claude.
const MinTriggerSecretLen = 16

// triggerNamePattern keeps a name one URL path segment that needs no
// escaping, and a short metric label.
var triggerNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// resolveTriggers reads each trigger's secret_env into its Secret.
func (c *Config) resolveTriggers(env func(string) string, ps *problems) {
	for i := range c.Triggers {
		t := &c.Triggers[i]
		secretFromEnv(env, ps, triggerKey(i)+".secret_env", "secret", t.SecretEnv, &t.Secret)
	}
}

func triggerKey(i int) string { return triggersKey + "[" + strconv.Itoa(i) + "]" }

// validateService checks [http] and [[triggers]]. Messages describe a
// trigger's secret, never quote it.
func (c *Config) validateService(ps *problems) {
	if c.HTTP.Listen != "" {
		if _, err := ParseListen(c.HTTP.Listen); err != nil {
			ps.add("http.listen", "%v", err)
		}
	}
	seen := map[string]int{}
	for i, t := range c.Triggers {
		key := triggerKey(i)
		switch lower := strings.ToLower(t.Name); {
		case t.Name == "":
			ps.add(key+".name", "required: the webhook's name, its URL is /hooks/<name>")
		case !triggerNamePattern.MatchString(t.Name):
			ps.add(key+".name", "%q must be 1-64 letters, digits, '_' or '-', starting with a letter or digit (it is a URL path segment)", t.Name)
		default:
			if j, dup := seen[lower]; dup {
				ps.add(key+".name", "%q is also the name of triggers[%d]; names must differ (ignoring case)", t.Name, j)
			} else {
				seen[lower] = i
			}
		}
		switch s := t.Secret.Reveal(); {
		case ps.has(key + ".secret_env"):
		case s == "":
			ps.add(key+".secret", "required: the webhook's secret, here or through secret_env")
		case len(s) < MinTriggerSecretLen:
			ps.add(key+".secret", "is %d bytes long; use at least %d random characters (e.g. openssl rand -hex 32)", len(s), MinTriggerSecretLen)
		}
		c.validateTarget(ps, key, target{chat: t.ChatID, thread: t.ThreadID, project: t.Project,
			chatKey: "chat_id", threadKey: "thread_id"})
		if strings.TrimSpace(t.Prompt) == "" {
			ps.add(key+".prompt", "required: a template over the JSON body, e.g. \"CI failed: {{.workflow_run.html_url}}\"")
		} else if _, err := hookprompt.Parse(t.Name, t.Prompt); err != nil {
			ps.add(key+".prompt", "%v", err)
		}
		// The CLI runs tools that could read its environment.
		if s := t.Secret.Reveal(); s != "" {
			for name, value := range c.Claude.Env {
				if strings.Contains(value, s) {
					ps.add(envKey+"."+quoteKey(name), "value contains the secret of %s; the Claude CLI must never see it", key)
				}
			}
		}
	}
}

// ParseListen checks an http.listen value: host:port with a numeric port
// from 1 to 65535, the host an IP address, a name, or empty for every
// interface. It returns the host.
func ParseListen(addr string) (host string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q is not host:port, e.g. \"127.0.0.1:9464\" (%v)", addr, unwrapAddrError(err))
	}
	if n, perr := strconv.Atoi(port); perr != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%q: the port must be a number from 1 to 65535", addr)
	}
	if strings.ContainsAny(host, " /%") && net.ParseIP(host) == nil {
		return "", fmt.Errorf("%q: %q is not an IP address or a host name", addr, host)
	}
	return host, nil
}

// ListenIsLoopback reports whether addr (a valid http.listen) only accepts
// connections from this machine: a loopback IP address or "localhost".
// An empty host listens on every interface.
func ListenIsLoopback(addr string) bool {
	host, err := ParseListen(addr)
	return err == nil && loopbackHost(host)
}

func unwrapAddrError(err error) string {
	if ae, ok := err.(*net.AddrError); ok {
		return ae.Err
	}
	return err.Error()
}
