package metrics

// Metric names. The dashboard (deploy/grafana/untether.json) uses exactly
// these; TestDashboardMatchesMetrics keeps them in step.
const (
	// Turns.
	NameTurnsStarted  = "untether_turns_started_total"  // {project}
	NameTurnsFinished = "untether_turns_finished_total" // {project, outcome}
	NameCostUSD       = "untether_cost_usd_total"       // {project}
	NameTokens        = "untether_tokens_total"         // {project, kind}
	NameAnswerLatency = "untether_answer_latency_seconds"
	NameProgressStale = "untether_progress_staleness_seconds"

	// Telegram's Bot API.
	NameBotAPICalls      = "untether_telegram_api_calls_total" // {method, status}
	NamePenaltySeconds   = "untether_telegram_penalty_seconds_total"
	NameChatsInPenalty   = "untether_telegram_chats_in_penalty"
	NameOutboxDepth      = "untether_outbox_queue_depth" // {priority}
	NameUpdateLag        = "untether_getupdates_lag_seconds"
	NameLastPollSuccess  = "untether_getupdates_last_success_timestamp_seconds"
	NameStateRefused     = "untether_state_writes_refused_total" // {kind}
	NameWebhookDelivered = "untether_webhook_deliveries_total"   // {trigger, result}
	NameHTTPRequests     = "untether_http_requests_total"        // {handler, code}

	// Claude CLIs.
	NameLiveCLIs         = "untether_cli_live"
	NameWaitingForSlot   = "untether_chats_waiting_for_slot"
	NameCLISpawns        = "untether_cli_spawns_total"   // {project}
	NameCLICrashes       = "untether_cli_crashes_total"  // {project}
	NameCLIRestarts      = "untether_cli_restarts_total" // {project}
	NameCLIInfo          = "untether_claude_cli_info"    // {version}
	NamePendingApprovals = "untether_approvals_pending"
	NameApprovalWait     = "untether_approval_wait_seconds" // {decision}

	// The daemon itself.
	NameBuildInfo = "untether_build_info" // {version, commit, go_version}
)

// help is each family's HELP text. The library writes a bare "# HELP
// name" line (it keeps no help); the handler fills the text in from here.
var help = map[string]string{
	NameTurnsStarted:  "Turns started (a prompt given to a CLI), by project.",
	NameTurnsFinished: "Turns ended, by project and outcome.",
	NameCostUSD:       "Cost in US dollars as the CLI reports it (total_cost_usd), by project.",
	NameTokens:        "Tokens the CLI reports, by project and kind (input, output, cache_read, cache_creation).",
	NameAnswerLatency: "Time from the bridge taking the CLI's result to the sendMessage call that delivered the answer (its first part).",
	NameProgressStale: "Time a progress message showed what it showed before an edit Telegram accepted replaced it.",

	NameBotAPICalls:      "Bot API calls by method and HTTP status (\"network\": no answer).",
	NamePenaltySeconds:   "Seconds of retry_after that 429 answers imposed, summed over chats.",
	NameChatsInPenalty:   "Chats paused by a 429 (retry_after) right now.",
	NameOutboxDepth:      "Operations queued for Telegram, by priority (high: answers and approvals; low: progress edits).",
	NameUpdateLag:        "Time from an update's date to the getUpdates response that brought it.",
	NameLastPollSuccess:  "Unix time of the last successful getUpdates call.",
	NameStateRefused:     "State writes the storage refused (full disk, read-only), by kind; they are kept in memory and retried.",
	NameWebhookDelivered: "Webhook deliveries by trigger and result.",
	NameHTTPRequests:     "Requests to the HTTP listener by handler and status code.",

	NameLiveCLIs:         "Claude CLI processes running now.",
	NameWaitingForSlot:   "Chats waiting for a free CLI slot (claude.max_live_processes).",
	NameCLISpawns:        "Claude CLI processes started, by project.",
	NameCLICrashes:       "Claude CLI processes that died unasked, by project.",
	NameCLIRestarts:      "Claude CLI processes started again after a crash, by project.",
	NameCLIInfo:          "The Claude CLI's version (value 1).",
	NamePendingApprovals: "Tool approvals waiting for a person.",
	NameApprovalWait:     "Time an approval waited for its decision, by decision.",

	NameBuildInfo: "The untether binary (value 1).",
}
