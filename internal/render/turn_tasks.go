package render

import "github.com/untether/untether/internal/runner"

// taskState is one background task (long Bash, subagent, monitor).
type taskState struct {
	ID          string
	Description string
	LastTool    string
	ToolUses    int64
	Status      string // "" while running; completed | failed | stopped | …
	Summary     string
}

func (s taskState) finished() bool {
	switch s.Status {
	case "", "running", "pending":
		return false
	}
	return true
}

// task returns the state for id, adding it (and evicting a finished or
// else the oldest task) when it is new.
func (t *Turn) task(id string) *taskState {
	for i := range t.tasks {
		if t.tasks[i].ID == id {
			return &t.tasks[i]
		}
	}
	if len(t.tasks) == maxTasks {
		evict := 0
		for i, s := range t.tasks {
			if s.finished() {
				evict = i
				break
			}
		}
		t.tasks = append(t.tasks[:evict], t.tasks[evict+1:]...)
	}
	t.tasks = append(t.tasks, taskState{ID: id})
	return &t.tasks[len(t.tasks)-1]
}

// applyBackgroundTasks takes a full snapshot of the live tasks: running
// tasks missing from it have ended, and new ones are added.
func (t *Turn) applyBackgroundTasks(e runner.BackgroundTasks) {
	live := t.tasks[:0]
	for _, s := range t.tasks {
		if s.finished() || containsTask(e.Tasks, s.ID) {
			live = append(live, s)
		}
	}
	t.tasks = live
	for _, info := range e.Tasks {
		s := t.task(info.TaskID)
		if s.Description == "" {
			s.Description = info.Description
		}
	}
}

func containsTask(tasks []runner.TaskInfo, id string) bool {
	for _, ti := range tasks {
		if ti.TaskID == id {
			return true
		}
	}
	return false
}

func (t *Turn) taskNotes() []string {
	var out []string
	shown := 0
	// Running tasks first: they are what keeps the session busy.
	for pass := 0; pass < 2; pass++ {
		for _, s := range t.tasks {
			if s.finished() != (pass == 1) || shown == maxTaskLines {
				continue
			}
			shown++
			desc := firstNonEmpty(oneLine(s.Description), s.ID)
			if !s.finished() {
				line := "🧵 " + desc
				if s.ToolUses > 0 {
					line += " · " + plural(int(s.ToolUses), "tool use", "tool uses")
				}
				if s.LastTool != "" {
					line += ", last " + s.LastTool
				}
				out = append(out, line)
				continue
			}
			line := "🧵 " + desc + ": " + s.Status
			if s.Summary != "" {
				line += " — " + oneLine(s.Summary)
			}
			out = append(out, line)
		}
	}
	if more := len(t.tasks) - shown; more > 0 {
		out = append(out, "🧵 +"+plural(more, "more background task", "more background tasks"))
	}
	return out
}
