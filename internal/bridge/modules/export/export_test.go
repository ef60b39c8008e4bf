package export

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
)

func TestCLIHome(t *testing.T) {
	inherit := []string{"PATH=/bin", "HOME=/home/daemon"}
	cases := []struct {
		name string
		p    config.ProjectSettings
		want string
	}{
		{"the project's home", config.ProjectSettings{Project: config.Project{Home: "/home/p", Env: map[string]string{"HOME": "/home/env"}}}, "/home/p"},
		{"its env's", config.ProjectSettings{Project: config.Project{Env: map[string]string{"HOME": "/home/env"}}}, "/home/env"},
		{"the daemon's", config.ProjectSettings{}, "/home/daemon"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, cliHome(tc.p, inherit)) })
	}
}

type sessionsFunc func(id string) (state.Session, error)

func (f sessionsFunc) GetSession(_ context.Context, id string) (state.Session, error) { return f(id) }

// TestRecord: the document's last line is untether's record of the
// session, or says why there is none.
func TestRecord(t *testing.T) {
	cases := []struct {
		name string
		se   state.Session
		err  error
		want string
	}{
		{"one turn", state.Session{Turns: 1, CostUSD: 0.0123}, nil, "untether ran 1 turn of this session, costing $0.0123 in all"},
		{"turns", state.Session{Turns: 12, CostUSD: 3.5}, nil, "untether ran 12 turns of this session, costing $3.50 in all"},
		{"outside untether", state.Session{}, fmt.Errorf("read: %w", state.ErrNotFound), "untether ran no turn of this session: it was started outside untether"},
		{"unreadable", state.Session{}, errors.New("disk"), "untether's record of this session could not be read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Module{store: sessionsFunc(func(string) (state.Session, error) { return tc.se, tc.err })}
			assert.Contains(t, m.record(context.Background(), "id"), tc.want)
		})
	}
}

func TestFailure(t *testing.T) {
	assert.Equal(t, "📝 This session has no transcript yet: Claude writes it at the session's first turn.",
		failure(fmt.Errorf("export: %w", fs.ErrNotExist)))
	assert.Contains(t, failure(errTooBig), "over the 50 MB a bot may send")
	assert.Equal(t, "⚠️ Could not export this session: a &lt;b&gt;", failure(errors.New("a <b>")))
}
