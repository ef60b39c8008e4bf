package background

import (
	"strings"
	"sync"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// Module is the feature.
type Module struct {
	mu       sync.Mutex
	finished map[state.ChatKey][]string // summaries of jobs ended since the chat's last answer
}

// New builds the module.
func New() *Module {
	return &Module{finished: map[state.ChatKey][]string{}}
}

// maxFinishedJobs bounds the summaries kept for one heading.
const maxFinishedJobs = 5

// Register adds the event hook that collects ended jobs and the heading.
func (m *Module) Register(r *chat.Registry) {
	r.OnEvent(func(c *chat.Chat, ev runner.Event) {
		if e, ok := ev.(runner.TaskFinished); ok {
			m.mu.Lock()
			if jobs := m.finished[c.Key()]; len(jobs) < maxFinishedJobs {
				m.finished[c.Key()] = append(jobs, jobHeadline(e))
			}
			m.mu.Unlock()
		}
	})
	r.AnswerHeading(func(c *chat.Chat, tc runner.TurnCompleted) string {
		m.mu.Lock()
		jobs := m.finished[c.Key()]
		delete(m.finished, c.Key())
		m.mu.Unlock()
		if tc.Origin != "task-notification" {
			return ""
		}
		if len(jobs) == 0 {
			return "🧵 Background work Claude started has ended."
		}
		return "🧵 " + strings.Join(jobs, "; ")
	})
}

// jobHeadline is one ended job in the user's words.
func jobHeadline(e runner.TaskFinished) string {
	s := strings.TrimSpace(e.Summary)
	if s == "" {
		s = "A background job " + e.Status
	}
	return s
}
