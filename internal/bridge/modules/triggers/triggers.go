package triggers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/service/webhook"
)

// Module is the feature.
type Module struct {
	host  *chat.Host
	store store
	log   *zerolog.Logger
	queue chat.WaitQueue[state.TriggerRun]

	mu sync.Mutex
	// started: Start replayed the runs kept by the last run; from then on
	// Fire hands its runs over itself.
	started bool
	// handed are the runs handed to their chat and not finished: a run is
	// handed over once, whether Start or Fire finds it first.
	handed map[int64]bool
}

// store is what the module reads and writes of the state database.
type store interface {
	AddTriggerRun(ctx context.Context, r state.TriggerRun) (int64, error)
	FinishTriggerRun(ctx context.Context, id int64) error
	TriggerRuns(ctx context.Context) ([]state.TriggerRun, error)
	ClaimWebhookKey(ctx context.Context, key string, now time.Time, window time.Duration) (bool, error)
	ReleaseWebhookKey(ctx context.Context, key string) error
}

// New builds the module.
func New(h *chat.Host) *Module {
	return &Module{host: h, store: h.Store(), log: h.Logger(), handed: map[int64]bool{}}
}

var (
	_ webhook.Firer = (*Module)(nil)
	_ webhook.Seen  = (*Module)(nil)
)

// Register asks for the queue in which runs wait for their chat.
func (m *Module) Register(r *chat.Registry) {
	m.queue = chat.NewWaitQueue(r, m.start)
}

// Start hands the runs a stop interrupted to their chats, then lets Fire
// hand over its own; it returns when ctx ends.
func (m *Module) Start(ctx context.Context) {
	m.mu.Lock()
	m.started = true
	runs, err := m.store.TriggerRuns(ctx)
	if err != nil {
		m.log.Error().Err(err).Msg("list the webhook runs a restart interrupted")
	}
	for _, r := range runs {
		m.log.Info().Str("trigger", r.Trigger).Str("chat", r.Key.String()).Int64("run", r.ID).
			Msg("running a webhook prompt that waited when untether stopped")
		m.handOverLocked(r)
	}
	m.mu.Unlock()
	<-ctx.Done()
}

// errUnavailable is a refusal the sender should try again later.
func errUnavailable(why string) error { return fmt.Errorf("%w: %s", webhook.ErrUnavailable, why) }

// Fire implements webhook.Firer: the run is kept in the state database,
// then handed to its chat.
func (m *Module) Fire(ctx context.Context, run webhook.Run) error {
	if m.host.Draining() {
		return errUnavailable("untether is restarting")
	}
	t := run.Trigger
	key := state.ChatKey{Chat: state.ChatID(t.ChatID), Thread: state.ThreadID(t.ThreadID)}
	if !m.host.ChatServed(key) {
		return fmt.Errorf("trigger %s: chat %s is not allowed", t.Name, key)
	}
	r := state.TriggerRun{Trigger: t.Name, Key: key, Project: t.Project, Prompt: run.Prompt, Delivery: run.Delivery,
		Event: run.Event, Created: m.host.Now()}
	id, err := m.store.AddTriggerRun(ctx, r)
	switch {
	case errors.Is(err, state.ErrStorage):
		return errUnavailable("the state database refuses writes, so the run could not be kept")
	case err != nil:
		return fmt.Errorf("keep the run: %w", err)
	}
	r.ID = id
	m.log.Info().Str("trigger", t.Name).Str("chat", key.String()).Int64("run", id).Str("event", run.Event).
		Msg("webhook run accepted")
	m.mu.Lock()
	if m.started {
		m.handOverLocked(r)
	}
	m.mu.Unlock()
	return nil
}

// handOverLocked posts r to its chat's actor, once. While untether drains
// the chat may have no actor: the run stays kept for the next start.
func (m *Module) handOverLocked(r state.TriggerRun) {
	if m.handed[r.ID] {
		return
	}
	c := m.host.Chat(r.Key)
	if c == nil {
		return
	}
	m.handed[r.ID] = true
	c.Post(func() { m.queue.Add(c, r) })
}

// Claim implements webhook.Seen, in the state database: a replay is
// caught across a restart. A disk that refuses the write makes the sender
// try again later (503).
func (m *Module) Claim(ctx context.Context, key string, now time.Time) (bool, error) {
	fresh, err := m.store.ClaimWebhookKey(ctx, key, now, webhook.DefaultReplayWindow)
	if errors.Is(err, state.ErrStorage) {
		return false, errUnavailable("the state database refuses writes, so the delivery could not be recorded")
	}
	return fresh, err
}

// Release implements webhook.Seen.
func (m *Module) Release(ctx context.Context, key string) error {
	return m.store.ReleaseWebhookKey(ctx, key)
}
