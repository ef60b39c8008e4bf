package bridge_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Most bridge tests run the real CLI. A few CLI behaviours cannot be
// provoked from it on purpose (2.1.328 never cancels a queued message by
// itself), so for those the test binary re-executes as a tiny fake CLI.
const envFakeCLI = "UNTETHER_BRIDGE_FAKE_CLI"

// envFakeCLILog names a file the fake CLI appends a line to for every
// control request it receives ("control <subtype> <mode>") and every
// permission mode it is in ("mode <mode>"), so a test sees what reached
// the CLI and what it ended up doing.
const envFakeCLILog = "UNTETHER_BRIDGE_FAKE_CLI_LOG"

func TestMain(m *testing.M) {
	if os.Getenv(envFakeCLI) != "" {
		os.Exit(fakeCLI())
	}
	os.Exit(m.Run())
}

// fakeCLI answers "echo: <text>" to every message, except that a message
// starting with HOLD keeps its turn open until the next message arrives;
// that next message is reported queued and then cancelled, and the held
// turn completes. "SWITCH <mode>" makes it switch its permission mode by
// itself (as an approved plan does), which it reports in system/status,
// as it does for set_permission_mode.
func fakeCLI() int {
	if len(os.Args) > 2 && os.Args[1] == "auth" && os.Args[2] == "status" {
		// What the real CLI prints with an API key; the login module asks
		// at every start.
		fmt.Println(`{"loggedIn":true,"authMethod":"api_key","apiProvider":"firstParty","apiKeySource":"ANTHROPIC_API_KEY"}`)
		return 0
	}
	record := func(string) {}
	if p := os.Getenv(envFakeCLILog); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return 1
		}
		defer f.Close()
		record = func(line string) { fmt.Fprintln(f, line) }
	}
	mode := "default"
	for i, a := range os.Args {
		if a == "--permission-mode" && i+1 < len(os.Args) {
			mode = os.Args[i+1]
		}
	}
	record("mode " + mode)
	sid := "00000000-0000-4000-8000-00000000000f"
	for _, a := range os.Args {
		for _, flag := range []string{"--session-id=", "--resume="} {
			if v, ok := strings.CutPrefix(a, flag); ok {
				sid = v
			}
		}
	}
	emit := func(v map[string]any) {
		v["session_id"] = sid
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
	}
	lifecycle := func(uuid, state string) {
		emit(map[string]any{"type": "command_lifecycle", "command_uuid": uuid, "state": state})
	}
	answer := func(text string, uuids ...string) {
		emit(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_" + uuids[0], "role": "assistant",
			"model": "fake-model", "content": []any{map[string]any{"type": "text", "text": text}}}})
		emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text, "num_turns": 1,
			"duration_ms": 5, "total_cost_usd": 0.01, "terminal_reason": "completed", "user_message_uuids": uuids})
		for _, u := range uuids {
			lifecycle(u, "completed")
		}
	}
	setMode := func(m string) {
		mode = m
		record("mode " + mode)
		emit(map[string]any{"type": "system", "subtype": "status", "status": nil, "permissionMode": mode})
	}
	held := ""
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var in struct {
			Type      string `json:"type"`
			UUID      string `json:"uuid"`
			RequestID string `json:"request_id"`
			Request   struct {
				Subtype string `json:"subtype"`
				Mode    string `json:"mode"`
			} `json:"request"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &in) != nil {
			return 1
		}
		switch in.Type {
		case "control_request":
			record("control " + in.Request.Subtype + " " + in.Request.Mode)
			resp := map[string]any{}
			if in.Request.Subtype == "get_settings" { // its model takes no effort level
				resp["applied"] = map[string]any{"effort": nil}
			}
			emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": in.RequestID, "response": resp}})
			if in.Request.Subtype == "set_permission_mode" {
				setMode(in.Request.Mode)
			}
		case "user":
			var text string
			if json.Unmarshal(in.Message.Content, &text) != nil {
				text = string(in.Message.Content)
			}
			if held != "" {
				lifecycle(in.UUID, "queued")
				lifecycle(in.UUID, "cancelled")
				answer("held turn done", held)
				held = ""
				continue
			}
			lifecycle(in.UUID, "queued")
			lifecycle(in.UUID, "started")
			emit(map[string]any{"type": "system", "subtype": "init", "model": "fake-model", "permissionMode": mode,
				"cwd": mustGetwd(), "tools": []string{"Bash"}})
			if strings.HasPrefix(text, "HOLD") {
				held = in.UUID
				continue
			}
			if m, ok := strings.CutPrefix(text, "SWITCH "); ok {
				setMode(strings.TrimSpace(m))
			}
			answer("echo: "+text, in.UUID)
		}
	}
	return 0
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}
