package chat

import (
	"context"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// procRecorder keeps the state's list of running CLI processes
// (runner.ProcessTracker), so that the next start can kill what this
// instance leaves behind if it is SIGKILLed.
type procRecorder struct{ b *Engine }

func (r procRecorder) ProcessStarted(p runner.ProcRecord) {
	err := r.b.store.PutCLIProc(context.Background(), state.CLIProc{Tag: p.Tag, PID: p.PID, StartTime: p.StartTime})
	if err != nil {
		r.b.log.Warn().Err(err).Int("pid", p.PID).Msg("record CLI process")
	}
}

func (r procRecorder) ProcessExited(p runner.ProcRecord) {
	if err := r.b.store.DeleteCLIProc(context.Background(), p.Tag); err != nil {
		r.b.log.Warn().Err(err).Int("pid", p.PID).Msg("forget CLI process")
	}
}

// killLeftovers kills the CLI processes, and their tools, that a previous
// instance recorded and never stopped (it was SIGKILLed), and forgets them.
// It runs before any session spawns.
func (b *Engine) killLeftovers(ctx context.Context) {
	procs, err := b.store.CLIProcs(ctx)
	if err != nil || len(procs) == 0 {
		if err != nil {
			b.log.Error().Err(err).Msg("read the CLI processes of the previous run")
		}
		return
	}
	recs := make([]runner.ProcRecord, len(procs))
	for i, p := range procs {
		recs[i] = runner.ProcRecord{PID: p.PID, StartTime: p.StartTime, Tag: p.Tag}
	}
	killed, err := runner.KillLeftovers(recs)
	if err != nil {
		b.log.Error().Err(err).Msg("kill the CLI processes of the previous run")
	}
	names, pids := make([]string, len(killed)), make([]int, len(killed))
	for i, k := range killed {
		names[i], pids[i] = k.Name, k.PID
	}
	// The names say what outlived the previous run: a tool that setsid'd
	// away, or a tool's command still running when its CLI was killed.
	b.log.Info().Int("recorded", len(procs)).Int("killed", len(killed)).Strs("processes", names).Ints("pids", pids).
		Msg("cleaned up after the previous run")
	for _, p := range procs {
		if err := b.store.DeleteCLIProc(ctx, p.Tag); err != nil {
			b.log.Warn().Err(err).Msg("forget a CLI process of the previous run")
		}
	}
}
