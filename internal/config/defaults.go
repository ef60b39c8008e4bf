package config

// Default returns a Config holding every default. The required keys
// (telegram.bot_token, telegram.allowed_user_ids, claude.workdir) are empty,
// and paths are not yet ~-expanded, so Default alone does not validate.
func Default() Config {
	return Config{
		Telegram: Telegram{
			APIURL:         DefaultAPIURL,
			GroupTrigger:   DefaultGroupTrigger,
			PollTimeout:    DefaultPollTimeout,
			ConflictGrace:  DefaultConflictGrace,
			AlbumWait:      DefaultAlbumWait,
			ForwardWait:    DefaultForwardWait,
			DefaultProject: DefaultProjectName,
		},
		Claude: Claude{
			Binary:              DefaultClaudeBinary,
			PermissionMode:      DefaultPermissionMode,
			AllowedModes:        DefaultAllowedModes(),
			IdleTimeout:         DefaultIdleTimeout,
			ApprovalTimeout:     DefaultApprovalTimeout,
			LoginTimeout:        DefaultLoginTimeout,
			StopTimeout:         DefaultStopTimeout,
			MaxLiveProcesses:    DefaultMaxLiveProcesses,
			MaxConcurrentSpawns: DefaultMaxConcurrentSpawns,
			RetryAfterLimit:     DefaultRetryAfterLimit,
		},
		Progress: Progress{
			Interval:   DefaultProgressInterval,
			StallAfter: DefaultStallAfter, StallNotifyAfter: DefaultStallNotifyAfter,
			MaxRows:  DefaultMaxRows,
			Verbose:  DefaultVerbose,
			OnFinish: DefaultOnFinish,
			Typing:   DefaultTyping,
			Drafts:   DefaultDrafts,
		},
		Render: Render{ShowResumeLine: DefaultShowResumeLine, ContextWarnAt: DefaultContextWarnAt, ContextFullAt: DefaultContextFullAt},
		Files: Files{MaxUploadMB: DefaultMaxUploadMB, Keep: DefaultUploadKeep,
			OutboxKeep: DefaultOutboxKeep, Deny: DefaultDeny(), ZipDirs: DefaultZipDirs, MaxFilesPerTurn: DefaultMaxFilesPerTurn},
		Voice: Voice{Command: []string{}, Model: DefaultVoiceModel, FFmpeg: DefaultVoiceFFmpeg, MaxMB: DefaultVoiceMaxMB,
			Timeout: DefaultVoiceTimeout},
		State:     State{Dir: DefaultStateDir, Retention: DefaultRetention},
		Log:       Log{Level: DefaultLogLevel, Format: DefaultLogFormat},
		Daemon:    Daemon{DrainTimeout: DefaultDrainTimeout},
		Budget:    Budget{WarnAt: DefaultBudgetWarnAt, UnreportedTurnUSD: DefaultUnreportedTurnUSD},
		Scheduler: Scheduler{MaxPerChat: DefaultMaxSchedulesPerChat, CatchUp: DefaultScheduleCatchUp},
	}
}
