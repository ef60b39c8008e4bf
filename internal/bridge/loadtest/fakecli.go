package loadtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Environment of the fake CLI. Per-message overrides ("tools=N", "gap=D",
// "answer=N" words in the user's text) win over these.
const (
	// EnvFakeCLI, set to "1", makes the test binary act as the CLI.
	EnvFakeCLI = "UNTETHER_LOADTEST_CLI"
	// EnvTools is the number of tool_use/tool_result pairs per turn (200).
	EnvTools = "UNTETHER_LOADTEST_TOOLS"
	// EnvGap is the pause before each tool event (a Go duration; 0, i.e.
	// full speed, by default).
	EnvGap = "UNTETHER_LOADTEST_GAP"
	// EnvAnswerBytes is the size of the answer text (500).
	EnvAnswerBytes = "UNTETHER_LOADTEST_ANSWER_BYTES"
	// EnvStepLog is a directory; when set, each turn writes <tag>.steps there:
	// one "<step> <unixnano>" line per tool_use frame, then "result <unixnano>".
	EnvStepLog = "UNTETHER_LOADTEST_STEPLOG"
)

// turnCost is what each fake turn reports, as the c1 capture did.
const turnCost = 0.00876

// ResultMarker precedes the unix-nanosecond time at which the fake CLI wrote
// the turn's result frame; it is the last word of every answer.
const ResultMarker = "RESULT-AT"

// TagPrefix precedes the turn's tag in the answer ("LT:<tag>"); the tag is
// the second word of the user's message ("LOAD <tag> ...").
const TagPrefix = "LT:"

// FramesPerTurn is how many stdout frames the fake CLI writes for a turn
// with n tools: queued and started lifecycle, init, 2n tool frames, the
// answer, result, completed lifecycle.
func FramesPerTurn(n int) int { return 2*n + 6 }

type turnSpec struct {
	tag         string
	tools       int
	gap         time.Duration
	answerBytes int
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func defaultSpec() turnSpec {
	s := turnSpec{tools: envInt(EnvTools, 200), answerBytes: envInt(EnvAnswerBytes, 500)}
	if d, err := time.ParseDuration(os.Getenv(EnvGap)); err == nil {
		s.gap = d
	}
	return s
}

// parseSpec reads "LOAD <tag> [tools=N] [gap=D] [answer=N]"; other texts get
// the defaults and the tag "x".
func parseSpec(text string, def turnSpec) turnSpec {
	s := def
	s.tag = "x"
	f := strings.Fields(text)
	if len(f) >= 2 && f[0] == "LOAD" {
		s.tag = f[1]
		f = f[2:]
	}
	for _, w := range f {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			continue
		}
		switch k {
		case "tools":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				s.tools = n
			}
		case "gap":
			if d, err := time.ParseDuration(v); err == nil {
				s.gap = d
			}
		case "answer":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				s.answerBytes = n
			}
		}
	}
	return s
}

// FakeCLIMain speaks just enough stream-json for load: for every user line
// it writes the lifecycle frames, system/init, the tool pairs, an answer and
// a result (frame shapes copied from testdata/transcripts/c1-bash-allow.jsonl
// and s3-uuid-command-lifecycle-queue-interrupt.jsonl). Control requests get
// an empty success, other lines are ignored; it exits when stdin closes.
func FakeCLIMain(args []string, stdin io.Reader, stdout io.Writer) int {
	sid := argValue(args, "--session-id")
	if id := argValue(args, "--resume"); id != "" {
		sid = id
	}
	if sid == "" {
		sid = "00000000-0000-4000-8000-000000000000"
	}
	cwd, _ := os.Getwd()
	w := &frameWriter{out: stdout, sid: sid, cwd: cwd, pid: os.Getpid()}
	def := defaultSpec()
	logDir := os.Getenv(EnvStepLog)
	r := bufio.NewReaderSize(stdin, 1<<20)
	cost := 0.0
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var in struct {
				Type      string `json:"type"`
				UUID      string `json:"uuid"`
				RequestID string `json:"request_id"`
				Message   struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &in) == nil {
				switch in.Type {
				case "control_request":
					w.raw(`{"type":"control_response","response":{"subtype":"success","request_id":` + jsonString(in.RequestID) + `,"response":{}}}`)
				case "user":
					var text string
					if json.Unmarshal(in.Message.Content, &text) != nil {
						text = string(in.Message.Content)
					}
					cost += turnCost
					w.turn(in.UUID, parseSpec(text, def), cost, logDir)
				}
			}
		}
		if err != nil {
			return 0
		}
	}
}

type frameWriter struct {
	out  io.Writer
	sid  string
	cwd  string
	pid  int
	seq  atomic.Uint64
	buf  []byte
	msgs int
}

func (w *frameWriter) raw(s string) {
	w.buf = append(w.buf[:0], s...)
	w.buf = append(w.buf, '\n')
	_, _ = w.out.Write(w.buf)
}

// uuid returns a fresh, well-formed uuid unique within the process.
func (w *frameWriter) uuid() string {
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", w.pid, 0xfa, w.seq.Add(1))
}

func (w *frameWriter) turn(userUUID string, s turnSpec, cost float64, logDir string) {
	sid := jsonString(w.sid)
	cu := jsonString(userUUID)
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	w.raw(`{"type":"command_lifecycle","command_uuid":` + cu + `,"state":"queued","uuid":"` + w.uuid() + `","session_id":` + sid + `}`)
	w.raw(`{"type":"command_lifecycle","command_uuid":` + cu + `,"state":"started","uuid":"` + w.uuid() + `","session_id":` + sid + `}`)
	w.raw(fmt.Sprintf(initFrame, jsonString(w.cwd), sid, w.uuid(), jsonString(w.cwd)))
	w.msgs++
	msgID := fmt.Sprintf("msg_load%08d%08d", w.pid, w.msgs)
	steps := make([]int64, s.tools)
	for i := 1; i <= s.tools; i++ {
		if s.gap > 0 {
			time.Sleep(s.gap)
		}
		tid := fmt.Sprintf("toolu_load%06d%08d", i, w.msgs)
		steps[i-1] = time.Now().UnixNano()
		w.raw(fmt.Sprintf(toolUseFrame, tid, i, i, msgID, sid, w.uuid(), now))
		w.raw(fmt.Sprintf(toolResultFrame, tid, i, sid, w.uuid(), now, tid))
	}
	answer := answerText(s)
	w.raw(fmt.Sprintf(textFrame, jsonString(answer), msgID+"a", sid, w.uuid(), now))
	at := time.Now().UnixNano()
	result := answer + " " + ResultMarker + " " + strconv.FormatInt(at, 10)
	w.raw(fmt.Sprintf(resultFrame, sid, cost, cost, jsonString(result), w.uuid(), turnCost, cu))
	w.raw(`{"type":"command_lifecycle","command_uuid":` + cu + `,"state":"completed","uuid":"` + w.uuid() + `","session_id":` + sid + `}`)
	if logDir != "" {
		writeStepLog(filepath.Join(logDir, s.tag+".steps"), steps, at)
	}
}

func answerText(s turnSpec) string {
	var b strings.Builder
	b.WriteString("Answer ")
	b.WriteString(TagPrefix)
	b.WriteString(s.tag)
	b.WriteString(".")
	const filler = " Lorem ipsum dolor sit amet, consectetur adipiscing elit."
	for b.Len() < s.answerBytes {
		b.WriteString(filler)
	}
	return b.String()
}

// writeStepLog is written after the turn so file I/O never slows the stream.
func writeStepLog(path string, steps []int64, result int64) {
	var b strings.Builder
	for i, t := range steps {
		fmt.Fprintf(&b, "%d %d\n", i+1, t)
	}
	fmt.Fprintf(&b, "result %d\n", result)
	_ = os.WriteFile(path, []byte(b.String()), 0o600)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func argValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v // the runner glues session ids to their flags
		}
	}
	return ""
}

// Frame templates: the c1-bash-allow capture's frames, compacted, with the
// per-turn values as verbs.
const (
	initFrame = `{"type":"system","subtype":"init","cwd":%s,"session_id":%s,"tools":["Task","AskUserQuestion","Bash","CronCreate","CronDelete","CronList","Edit","EnterPlanMode","EnterWorktree","ExitPlanMode","ExitWorktree","ListAgents","Monitor","NotebookEdit","Read","ReportFindings","ScheduleWakeup","SendMessage","Skill","TaskStop","ToolSearch","WebFetch","WebSearch","Workflow","Write"],"mcp_servers":[],"model":"claude-opus-5-5","permissionMode":"default","slash_commands":["deep-research","dataviz","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","doctor","loop","claude-api","workflow-authoring","run","run-skill-generator","plugin-authoring","agents","auto-mode-setup","autocompact","clear","color","compact","config","output-style","context","effort","fast","focus","heapdump","init","mcp","model","__remote-workflow","workflow-launch-exec","reload-plugins","reload-skills","rename","security-review","usage","insights","recap","goal","list-agents","team-onboarding"],"terminal_slash_commands":["doctor","color","focus","reload-plugins"],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.328","output_style":"default","agents":["claude","Explore","general-purpose","Plan","statusline-setup"],"skills":["deep-research","dataviz","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","doctor","loop","claude-api","workflow-authoring","run","run-skill-generator","plugin-authoring"],"plugins":[{"name":"cc-plugin-agents-md","path":"builtin","source":"cc-plugin-agents-md@builtin"},{"name":"cc-plugin-privacy","path":"builtin","source":"cc-plugin-privacy@builtin"},{"name":"cc-plugin-plugin-authoring","path":"builtin","source":"cc-plugin-plugin-authoring@builtin"}],"capabilities":["interrupt_receipt_v1","interrupt_cancel_queued_v1","interrupt_send_now_v1","interrupt_requeue_taken_v1","msg_lifecycle_v1","request_marker_lists_v1","ask_user_question_unanswered_v1","lifecycle_wakeup_source_v1","sdk_mcp_tools_list_changed","sdk_mcp_manifests","mcp_read_resource_v1","mcp_tool_ui_meta_v1","ui_surface_v1","mcp_call_result_not_for_model_v1","mcp_call_check_permissions_v1","voice_call_talk_line_v1","withdrawn_files_note_v2","ui_pane_widget_v1","reload_plugins_refuse_if_busy_v1","silent_resend_files_v1"],"analytics_disabled":true,"product_feedback_disabled":true,"uuid":"%s","memory_paths":{"auto":"/home/dev/.claude/projects/-tmp-load/memory/"},"original_cwd":%s,"additional_directories":[],"fast_mode_state":"off","fast_mode_disabled_reason":"sdk_opt_in_required","per_turn_effort_active":true,"ultrathink_available":false,"ultrathink_typed_raises":false,"view_mode":"default"}`
	// tool id, step, step, message id, session, uuid, timestamp
	toolUseFrame = `{"type":"assistant","message":{"content":[{"id":"%s","input":{"command":"echo step %d > out.txt","description":"Write step %d to out.txt"},"name":"Bash","type":"tool_use"}],"id":"%s","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":1000,"output_tokens":1},"context_management":null},"parent_tool_use_id":null,"session_id":%s,"uuid":"%s","timestamp":"%s","request_id":"req_fake000001"}`
	// tool id, step, session, uuid, timestamp, tool id
	toolResultFrame = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"%s","type":"tool_result","content":"step %d done","is_error":false}]},"parent_tool_use_id":null,"session_id":%s,"uuid":"%s","timestamp":"%s","tool_use_result":{"stdout":"","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_result_meta":[{"id":"%s","permission_decision":{"decision":"accept","source":"rule"}}]}`
	// text, message id, session, uuid, timestamp
	textFrame = `{"type":"assistant","message":{"content":[{"text":%s,"type":"text"}],"id":"%s","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"input_tokens":1000,"output_tokens":1},"context_management":null},"parent_tool_use_id":null,"session_id":%s,"uuid":"%s","timestamp":"%s","request_id":"req_fake000002"}`
	// session, total cost, total cost, result, uuid, turn cost, user message uuid
	resultFrame = `{"duration_api_ms":151,"stop_reason":"end_turn","session_id":%s,"total_cost_usd":%g,"usage":{"input_tokens":2000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":38,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{"claude-opus-5-5":{"inputTokens":2000,"outputTokens":38,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":%g,"contextWindow":1000000,"maxOutputTokens":128000,"thinkingTokens":0,"cacheCreationEphemeral5mInputTokens":0,"cacheCreationEphemeral1hInputTokens":0,"canonicalModel":"claude-opus-5-5","provider":"firstParty","costBasis":"list"}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","fast_mode_disabled_reason":"sdk_opt_in_required","safety_stops":0,"is_error":false,"num_turns":2,"subtype":"success","api_error_status":null,"result":%s,"ttft_ms":215,"type":"result","duration_ms":513,"uuid":"%s","queued_turn_count":0,"result_index":0,"model_usage_since_last_result":{"claude-opus-5-5":{"inputTokens":2000,"outputTokens":38,"costUSD":%g,"contextWindow":1000000,"maxOutputTokens":128000,"canonicalModel":"claude-opus-5-5"}},"user_message_uuids":[%s]}`
)
