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
