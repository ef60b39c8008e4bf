package telegramtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultToken has the shape of a real bot token (the example from the Bot
// API docs); the bot's user id is the number before the colon.
const DefaultToken = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"

// Defaults that tests usually leave alone.
const (
	// DefaultCallbackTimeout is how long a callback query may stay
	// unanswered. Telegram does not document it; 15 s is on the safe side of
	// what bots observe, and tests shorten it with a ManualClock.
	DefaultCallbackTimeout = 15 * time.Second
	defaultUpdateBase      = 100000
)

type config struct {
	token           string
	botName         string
	botUsername     string
	now             func() time.Time
	callbackTimeout time.Duration
	strictAmp       bool
	updateBase      UpdateID
	flood           *FloodLimits
}

// Option configures [New].
type Option func(*config)

// WithToken replaces [DefaultToken]. The digits before ':' become the bot id.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// WithBotIdentity sets getMe's first_name and username.
func WithBotIdentity(firstName, username string) Option {
	return func(c *config) { c.botName, c.botUsername = firstName, username }
}

// WithClock injects the clock behind dates, deadlines, flood windows and the
// call log. Long-poll timeouts and [Server.Delay] stay in real time because
// the client waits in real time.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithCallbackTimeout sets how long answerCallbackQuery is accepted.
func WithCallbackTimeout(d time.Duration) Option {
	return func(c *config) { c.callbackTimeout = d }
}

// WithStrictAmpersand controls rejecting a bare "&" in HTML text. It is on by
// default, which is stricter than Telegram (which keeps the "&"): a bridge
// that forgets to escape would otherwise pass tests by luck.
func WithStrictAmpersand(on bool) Option { return func(c *config) { c.strictAmp = on } }

// WithUpdateIDBase sets the first update_id handed out.
func WithUpdateIDBase(id UpdateID) Option { return func(c *config) { c.updateBase = id } }

// WithFloodControl enables flood-control emulation from the start.
func WithFloodControl(l FloodLimits) Option { return func(c *config) { c.flood = &l } }

// Server is a running fake Bot API. All methods are safe for concurrent use.
type Server struct {
	t     testing.TB
	cfg   config
	botID int64
	http  *httptest.Server
	done  chan struct{}
	once  sync.Once

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every state change
	chats       map[ChatID]*chatState
	nextUpdate  UpdateID
	queue       []queuedUpdate
	queued      []Update        // every update ever queued, in id order
	allowed     map[string]bool // nil: Telegram's default set
	confirmed   UpdateID
	handedOut   []UpdateID
	poll        *poller
	webhookURL  string
	queries     map[CallbackQueryID]*queryState
	nextQuery   int64
	nextAlbum   int64 // media_group_ids handed out
	answers     []CallbackAnswer
	actions     []ChatAction
	drafts      []Draft
	forumTopics []ForumTopic
	commands    map[commandKey][]BotCommand
	files       map[string]*storedFile // by file_id
	paths       map[string]*storedFile // by file_path, once getFile named it
	calls       []Call
	eventSeq    int
	flood       *floodState
	faults      []*fault
	delays      map[string]time.Duration
}

// New starts a fake on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{
		token: DefaultToken, botName: "Untether Test", botUsername: "untether_test_bot",
		now: time.Now, callbackTimeout: DefaultCallbackTimeout, strictAmp: true,
		updateBase: defaultUpdateBase,
	}
	for _, o := range opts {
		o(&cfg)
	}
	idText, _, _ := strings.Cut(cfg.token, ":")
	botID, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || !validToken(cfg.token) {
		t.Fatalf("telegramtest: token %q does not look like <digits>:<secret>", cfg.token)
	}
	s := &Server{
		t: t, cfg: cfg, botID: botID, done: make(chan struct{}),
		changed: make(chan struct{}), chats: map[ChatID]*chatState{},
		nextUpdate: cfg.updateBase, queries: map[CallbackQueryID]*queryState{},
		commands: map[commandKey][]BotCommand{}, files: map[string]*storedFile{},
		paths: map[string]*storedFile{}, delays: map[string]time.Duration{},
	}
	if cfg.flood != nil {
		s.flood = newFloodState(*cfg.flood)
	}
	s.http = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

func validToken(tok string) bool {
	id, secret, ok := strings.Cut(tok, ":")
	if !ok || id == "" || secret == "" {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	for _, c := range secret {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// URL is the base URL to pass to bot.WithServerURL.
func (s *Server) URL() string { return s.http.URL }

// Token is the bot token the fake accepts.
func (s *Server) Token() string { return s.cfg.token }

// BotID is the bot's user id (the token's numeric prefix).
func (s *Server) BotID() UserID { return UserID(s.botID) }

// Close stops the server. Pending long polls return an empty result first, so
// a client shutting down is never stuck behind the fake. Safe to call twice.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.http.Close()
	})
}

func (s *Server) now() time.Time { return s.cfg.now() }

// bumpLocked wakes every waiter (long polls, WaitFor).
func (s *Server) bumpLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// apiError is an error envelope; code doubles as the HTTP status.
type apiError struct {
	code       int
	desc       string
	retryAfter int
	migrateTo  ChatID
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: http.StatusBadRequest, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func tooManyRequests(retryAfter int) *apiError {
	return &apiError{code: http.StatusTooManyRequests, retryAfter: retryAfter,
		desc: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter)}
}

var (
	errUnauthorized = &apiError{code: http.StatusUnauthorized, desc: "Unauthorized"}
	errNotFound     = &apiError{code: http.StatusNotFound, desc: "Not Found"}
	errTooBig       = &apiError{code: http.StatusRequestEntityTooLarge, desc: "Request Entity Too Large"}
)

type handler func(s *Server, ctx context.Context, p params) (any, *apiError)

// handlers maps lower-cased method names: Telegram matches them
// case-insensitively.
var handlers = map[string]handler{
	"getme":                  (*Server).getMe,
	"getupdates":             (*Server).getUpdates,
	"sendmessage":            (*Server).sendMessage,
	"editmessagetext":        (*Server).editMessageText,
	"editmessagereplymarkup": (*Server).editMessageReplyMarkup,
	"deletemessage":          (*Server).deleteMessage,
	"answercallbackquery":    (*Server).answerCallbackQuery,
	"sendchataction":         (*Server).sendChatAction,
	"setmycommands":          (*Server).setMyCommands,
	"getmycommands":          (*Server).getMyCommands,
	"deletemycommands":       (*Server).deleteMyCommands,
	"senddocument":           (*Server).sendDocument,
	"sendphoto":              (*Server).sendPhoto,
	"sendmediagroup":         (*Server).sendMediaGroup,
	"sendmessagedraft":       (*Server).sendMessageDraft,
	"setwebhook":             (*Server).setWebhook,
	"deletewebhook":          (*Server).deleteWebhook,
	"getwebhookinfo":         (*Server).getWebhookInfo,
	"getfile":                (*Server).getFile,
	"createforumtopic":       (*Server).createForumTopic,
	"pinchatmessage":         (*Server).pinChatMessage,
	"unpinchatmessage":       (*Server).unpinChatMessage,
}

// ServeHTTP implements the Bot API transport, /bot{token}/{method}, and
// file downloads, /file/bot{token}/{file_path}.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, r, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || method == "" || strings.Contains(method, "/") {
		s.respond(w, -1, nil, errNotFound)
		return
	}
	p, perr := parseParams(r)
	idx := s.beginCall(method, p)
	switch {
	case token != s.cfg.token:
		s.respond(w, idx, nil, errUnauthorized)
		return
	case errors.Is(perr, errTooLarge):
		s.respond(w, idx, nil, errTooBig)
		return
	case perr != nil:
		s.respond(w, idx, nil, badRequest("%v", perr))
		return
	}
	if f, ok := s.takeFault(idx); ok {
		s.applyFault(w, idx, f)
		return
	}
	if !s.sleep(r.Context(), s.delayFor(method)) {
		s.finishCall(idx, 0, "client gone during injected delay", 0)
		return
	}
	h, ok := handlers[strings.ToLower(method)]
	if !ok {
		s.respond(w, idx, nil, errNotFound)
		return
	}
	result, aerr := h(s, r.Context(), p)
	// A late answer: the chat already shows what the call did, the bot
	// does not know it yet (DelayAnswer).
	s.sleep(r.Context(), s.delayFor(answerDelayPrefix+method))
	s.respond(w, idx, result, aerr)
}

// sleep waits d in real time; false means the client went away.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.done:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) respond(w http.ResponseWriter, idx int, result any, aerr *apiError) {
	env := envelope{OK: aerr == nil, Result: result}
	status := http.StatusOK
	if aerr != nil {
		status = aerr.code
		env.ErrorCode, env.Description = aerr.code, aerr.desc
		if aerr.retryAfter > 0 || aerr.migrateTo != 0 {
			env.Parameters = &wireParameters{RetryAfter: aerr.retryAfter, MigrateToChatID: int64(aerr.migrateTo)}
		}
	}
	body, err := json.Marshal(env)
	if err != nil { // a bug in the fake's own structs
		body, status = []byte(`{"ok":false,"error_code":500,"description":"telegramtest: encode response"}`), 500
		env.Description = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	if idx >= 0 {
		retry := 0
		if aerr != nil {
			retry = aerr.retryAfter
		}
		s.finishCall(idx, status, env.Description, retry)
	}
}

func (s *Server) beginCall(method string, p params) int {
	vals, files := p.record()
	chat, _, _ := p.int64("chat_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eventSeq++
	s.calls = append(s.calls, Call{
		Seq: len(s.calls) + 1, Time: s.now(), Method: method, Chat: ChatID(chat),
		Params: vals, Files: files, arriveSeq: s.eventSeq,
	})
	s.bumpLocked()
	return len(s.calls) - 1
}

func (s *Server) finishCall(idx, status int, desc string, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eventSeq++
	c := &s.calls[idx]
	c.Status, c.Description, c.RetryAfter, c.doneSeq, c.Done = status, desc, retryAfter, s.eventSeq, s.now()
	s.bumpLocked()
}
