package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fake CLI is this test binary re-executed with UNTETHER_FAKE_CLI set.
// It imitates the parts of the real CLI the supervision tests need (argv,
// stdin/stdout framing, lifecycle of a turn) and misbehaves on request:
// garbage lines, huge lines, crashes, ignored signals, a grandchild holding
// stdout. Protocol fidelity is the real-CLI tests' job.

const fakeCLIEnv = "UNTETHER_FAKE_CLI"

// fakeScript configures one fake CLI process.
type fakeScript struct {
	// ArgvFile receives argv and environment, one entry per line.
	ArgvFile string `json:"argv_file,omitempty"`
	// UnknownResume makes --resume fail like an unknown session id.
	UnknownResume bool `json:"unknown_resume,omitempty"`
	// IgnoreSIGTERM and IgnoreSIGINT make the process deaf to them.
	IgnoreSIGTERM bool `json:"ignore_sigterm,omitempty"`
	IgnoreSIGINT  bool `json:"ignore_sigint,omitempty"`
	// IgnoreInterrupt leaves interrupt control requests unanswered and the
	// turn running.
	IgnoreInterrupt bool `json:"ignore_interrupt,omitempty"`
	// GrandchildPIDFile: fork a child that holds stdout open, write its pid.
	GrandchildPIDFile string `json:"grandchild_pid_file,omitempty"`
	// SetsidPIDFile: start a child in a session of its own (as `setsid`
	// does), outside the CLI's process group, and write its pid.
	SetsidPIDFile string `json:"setsid_pid_file,omitempty"`
	// ExitAfterStdinEOF: exit when stdin closes (the real CLI does); false
	// makes it hang instead.
	HangOnEOF bool `json:"hang_on_eof,omitempty"`
	// FrameSessionID, if set, is the session id its frames report instead
	// of the one it was started with (a hostile or broken CLI).
	FrameSessionID string `json:"frame_session_id,omitempty"`
}

// TestMain turns the test binary into the fake CLI when asked.
func TestMain(m *testing.M) {
	switch os.Getenv(fakeCLIEnv) {
	case "":
		os.Exit(m.Run())
	case "grandchild":
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "exit":
		os.Exit(0)
	default:
		os.Exit(fakeCLI(os.Getenv(fakeCLIEnv)))
	}
}

func fakeCLI(scriptJSON string) int {
	var sc fakeScript
	if err := json.Unmarshal([]byte(scriptJSON), &sc); err != nil {
		fmt.Fprintln(os.Stderr, "fake cli: bad script:", err)
		return 2
	}
	args := os.Args[1:]
	if sc.ArgvFile != "" {
		_ = os.WriteFile(sc.ArgvFile, []byte(strings.Join(args, "\n")+"\n--env--\n"+strings.Join(os.Environ(), "\n")+"\n"), 0o600)
	}
	sessionID, resumed := argValue(args, "--session-id"), false
	if id := argValue(args, "--resume"); id != "" {
		sessionID, resumed = id, true
	}
	if sc.FrameSessionID != "" {
		sessionID = sc.FrameSessionID
	}
	if resumed && sc.UnknownResume {
		fmt.Fprintln(os.Stderr, "No conversation found with session ID: "+sessionID)
		emitJSON(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true,
			"num_turns": 0, "session_id": sessionID, "total_cost_usd": 0})
		return 1
	}
	if sc.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	interrupted := make(chan struct{}, 1)
	sigint := make(chan os.Signal, 1)
	if sc.IgnoreSIGINT {
		signal.Ignore(syscall.SIGINT)
	} else {
		signal.Notify(sigint, syscall.SIGINT)
		go func() {
			for range sigint {
				interrupted <- struct{}{}
			}
		}()
	}
	if sc.GrandchildPIDFile != "" {
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), fakeCLIEnv+"=grandchild")
		gc.Stdout = os.Stdout // holds our stdout open after we exit
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake cli: grandchild:", err)
			return 2
		}
		_ = os.WriteFile(sc.GrandchildPIDFile, []byte(fmt.Sprint(gc.Process.Pid)), 0o600)
	}
	if sc.SetsidPIDFile != "" {
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), fakeCLIEnv+"=grandchild")
		gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake cli: setsid child:", err)
			return 2
		}
		_ = os.WriteFile(sc.SetsidPIDFile, []byte(fmt.Sprint(gc.Process.Pid)), 0o600)
	}

	lines := make(chan []byte)
	go func() {
		r := bufio.NewReaderSize(os.Stdin, 1<<20)
		for {
			l, err := r.ReadBytes('\n')
			if len(l) > 0 {
				lines <- l
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	cost := 0.0
	pending := map[string]string{} // can_use_tool request id → user text
	for line := range lines {
		var in struct {
			Type      string          `json:"type"`
			UUID      string          `json:"uuid"`
			RequestID string          `json:"request_id"`
			Message   json.RawMessage `json:"message"`
			Request   struct {
				Subtype string `json:"subtype"`
				Mode    string `json:"mode"`
				Model   string `json:"model"`
			} `json:"request"`
			Response struct {
				Subtype   string          `json:"subtype"`
				RequestID string          `json:"request_id"`
				Error     string          `json:"error"`
				Response  json.RawMessage `json:"response"`
			} `json:"response"`
		}
		if err := json.Unmarshal(line, &in); err != nil {
			// The real CLI dies on a malformed line; so does the fake.
			fmt.Fprintln(os.Stderr, "Error parsing streaming input line")
			return 1
		}
		switch in.Type {
		case "control_request":
			switch in.Request.Subtype {
			case "interrupt":
				if !sc.IgnoreInterrupt {
					emitControlOK(in.RequestID, map[string]any{"still_queued": []string{}})
					select {
					case interrupted <- struct{}{}:
					default:
					}
				}
			case "set_permission_mode":
				emitControlOK(in.RequestID, map[string]any{"mode": in.Request.Mode})
				emitJSON(map[string]any{"type": "system", "subtype": "status", "status": nil, "permissionMode": in.Request.Mode, "session_id": sessionID})
			default:
				emitJSON(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error",
					"request_id": in.RequestID, "error": "Unsupported control request subtype: " + in.Request.Subtype}})
			}
		case "control_response":
			text, ok := pending[in.Response.RequestID]
			if !ok {
				continue
			}
			delete(pending, in.Response.RequestID)
			// Report what the host decided, as the tool result would.
			cost += 0.01
			fakeTurnEnd(sessionID, "decision: "+string(in.Response.Response)+" for "+text, cost, nil)
		case "user":
			var msg struct {
				Content json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(in.Message, &msg)
			var text string
			if json.Unmarshal(msg.Content, &text) != nil {
				text = string(msg.Content)
			}
			emitJSON(map[string]any{"type": "command_lifecycle", "command_uuid": in.UUID, "state": "started", "session_id": sessionID})
			emitJSON(map[string]any{"type": "system", "subtype": "init", "session_id": sessionID, "model": "fake-model",
				"claude_code_version": os.Getenv("UNTETHER_FAKE_CLI_VERSION"),
				"permissionMode":      argValue(args, "--permission-mode"), "cwd": mustGetwd(), "tools": []string{"Bash"}})
			switch {
			case strings.HasPrefix(text, "GARBAGE"):
				fmt.Println("this is not json")
				cost += 0.01
				fakeTurnEnd(sessionID, "after garbage", cost, []string{in.UUID})
			case strings.HasPrefix(text, "HUGE"):
				big := strings.Repeat("A", 8<<20)
				emitJSON(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": "toolu_big", "content": big}}}, "session_id": sessionID})
				cost += 0.01
				fakeTurnEnd(sessionID, "after huge", cost, []string{in.UUID})
			case strings.HasPrefix(text, "ENDLESS"):
				// One stdout line that never ends, until we are killed.
				chunk := []byte(`{"type":"assistant","message":{"content":"` + strings.Repeat("A", 1<<20))
				for {
					if _, err := os.Stdout.Write(chunk); err != nil {
						return 1
					}
					chunk = chunk[len(chunk)-1<<20:]
				}
			case strings.HasPrefix(text, "FUTURE"):
				printFutureFrames()
				cost += 0.01
				fakeTurnEnd(sessionID, "after future frames", cost, []string{in.UUID})
			case strings.HasPrefix(text, "CRASH"):
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			case strings.HasPrefix(text, "ASKHOST"):
				emitJSON(map[string]any{"type": "control_request", "request_id": "cli-req-1", "request": map[string]any{"subtype": "hook_callback", "callback_id": "x"}})
				cost += 0.01
				fakeTurnEnd(sessionID, "asked host", cost, []string{in.UUID})
			case strings.HasPrefix(text, "APPROVE"):
				id := "perm-" + in.UUID
				pending[id] = text
				emitJSON(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{
					"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "echo hi"}, "tool_use_id": "toolu_1"}})
			case strings.HasPrefix(text, "HEARTBEAT"):
				// A tool working quietly: heartbeats only, until interrupted.
			beats:
				for {
					select {
					case <-interrupted:
						break beats
					case <-time.After(100 * time.Millisecond):
						emitJSON(map[string]any{"type": "tool_progress", "tool_use_id": "toolu_hb", "tool_name": "Bash",
							"elapsed_time_seconds": 1, "session_id": sessionID})
					}
				}
				emitJSON(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true,
					"terminal_reason": "aborted_tools", "session_id": sessionID, "total_cost_usd": cost, "user_message_uuids": []string{in.UUID}})
			case strings.HasPrefix(text, "SLOW"):
				emitJSON(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_slow", "role": "assistant", "model": "fake-model",
					"content": []any{map[string]any{"type": "text", "text": "working slowly"}}}, "session_id": sessionID})
				select {
				case <-interrupted:
					emitJSON(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true,
						"terminal_reason": "aborted_streaming", "session_id": sessionID, "total_cost_usd": cost, "user_message_uuids": []string{in.UUID}})
				case <-time.After(10 * time.Minute):
				}
			default:
				cost += 0.01
				fakeTurnEnd(sessionID, "echo: "+text, cost, []string{in.UUID})
			}
			emitJSON(map[string]any{"type": "command_lifecycle", "command_uuid": in.UUID, "state": "completed", "session_id": sessionID})
		}
	}
	if sc.HangOnEOF {
		time.Sleep(10 * time.Minute)
	}
	return 0
}

func fakeTurnEnd(sessionID, text string, cost float64, uuids []string) {
	emitJSON(map[string]any{"type": "assistant", "message": map[string]any{"id": fmt.Sprintf("msg_%f", cost), "role": "assistant", "model": "fake-model",
		"content": []any{map[string]any{"type": "text", "text": text}},
		"usage":   map[string]any{"input_tokens": 1000, "output_tokens": 10}}, "session_id": sessionID})
	emitJSON(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text, "session_id": sessionID,
		"total_cost_usd": cost, "terminal_reason": "completed", "num_turns": 1, "duration_ms": 5,
		"modelUsage": map[string]any{"fake-model": map[string]any{"contextWindow": 200000, "costUSD": cost}}, "user_message_uuids": uuids})
}

func emitControlOK(id string, resp any) {
	emitJSON(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": resp}})
}

func emitJSON(v any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

// argValue is flag's value in args, given as "--flag value" or
// "--flag=value".
func argValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}
