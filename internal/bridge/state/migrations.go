package state

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] brings the schema from version i to i+1 (PRAGMA
// user_version). Append only: never edit a shipped entry, because databases
// in the field have already run it.
var migrations = []string{
	// 1: initial schema.
	`
CREATE TABLE update_offset (
	id             INTEGER PRIMARY KEY CHECK (id = 1), -- a single row
	last_update_id INTEGER NOT NULL
);

CREATE TABLE chats (
	chat_id         INTEGER NOT NULL,
	thread_id       INTEGER NOT NULL DEFAULT 0,
	session_id      TEXT    NOT NULL DEFAULT '',
	model           TEXT    NOT NULL DEFAULT '',
	permission_mode TEXT    NOT NULL DEFAULT '',
	workdir         TEXT    NOT NULL DEFAULT '',
	last_active     INTEGER NOT NULL DEFAULT 0,
	cost_usd        REAL    NOT NULL DEFAULT 0,
	turns           INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (chat_id, thread_id)
);
CREATE INDEX chats_last_active ON chats (last_active);

-- Telegram message ids are unique within a chat across its topics, so the
-- thread is data here, not part of the key.
CREATE TABLE live_messages (
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	message_id INTEGER NOT NULL,
	kind       TEXT    NOT NULL CHECK (kind IN ('progress', 'approval')),
	ref        TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (chat_id, message_id)
);

CREATE TABLE approvals (
	token       TEXT    PRIMARY KEY,
	chat_id     INTEGER NOT NULL,
	thread_id   INTEGER NOT NULL DEFAULT 0,
	message_id  INTEGER NOT NULL DEFAULT 0,
	request_id  TEXT    NOT NULL,
	session_id  TEXT    NOT NULL DEFAULT '',
	tool        TEXT    NOT NULL DEFAULT '',
	summary     TEXT    NOT NULL DEFAULT '',
	input_json  BLOB,
	suggestions BLOB,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL DEFAULT 0,
	decision    TEXT    NOT NULL DEFAULT '' CHECK (decision IN
		('', 'allow', 'deny', 'always', 'answer', 'expired', 'withdrawn', 'interrupted')),
	decided_by  INTEGER NOT NULL DEFAULT 0,
	decided_at  INTEGER NOT NULL DEFAULT 0,
	note        TEXT    NOT NULL DEFAULT ''
);
-- Pending approvals are few and read at every startup; the audit log grows.
CREATE INDEX approvals_pending ON approvals (created_at) WHERE decision = '';
CREATE INDEX approvals_chat ON approvals (chat_id, thread_id, created_at);

CREATE TABLE turns (
	id              INTEGER PRIMARY KEY,
	chat_id         INTEGER NOT NULL,
	thread_id       INTEGER NOT NULL,
	session_id      TEXT    NOT NULL DEFAULT '',
	started_at      INTEGER NOT NULL,
	duration_ns     INTEGER NOT NULL,
	cost_usd        REAL    NOT NULL,
	context_pct     REAL    NOT NULL,
	ok              INTEGER NOT NULL,
	terminal_reason TEXT    NOT NULL DEFAULT '',
	FOREIGN KEY (chat_id, thread_id) REFERENCES chats (chat_id, thread_id)
);
CREATE INDEX turns_chat ON turns (chat_id, thread_id, started_at);

-- AUTOINCREMENT so an acked id is never handed out again: a late or
-- duplicated ack for an old item must not delete a new one.
CREATE TABLE outbox (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	kind       TEXT    NOT NULL,
	payload    BLOB    NOT NULL,
	created_at INTEGER NOT NULL,
	attempts   INTEGER NOT NULL DEFAULT 0
);
`,
	// 2: updates handled above the contiguous offset. Chats handle updates
	// concurrently, so the offset is the highest id below which everything
	// was handled; ids handled beyond it are kept so a restart that is
	// re-sent those updates does not handle them twice.
	`
CREATE TABLE handled_updates (
	update_id INTEGER PRIMARY KEY
);
`,
	// 3: updates that arrived during a drain, kept (as the raw Bot API JSON)
	// to be handled by the next start; Telegram has already confirmed them.
	`
CREATE TABLE deferred_updates (
	update_id  INTEGER PRIMARY KEY,
	payload    BLOB    NOT NULL,
	created_at INTEGER NOT NULL
);
`,
	// 4: the CLI processes this instance runs, so the next start can kill
	// the ones a SIGKILLed instance left behind (pid and start time from
	// /proc, which together survive pid reuse; the tag finds their tools).
	`
CREATE TABLE cli_procs (
	tag        TEXT    PRIMARY KEY,
	pid        INTEGER NOT NULL,
	start_time INTEGER NOT NULL,
	started_at INTEGER NOT NULL
);
`,
	// 5: a chat keeps only what its users chose (/mode, /model). Earlier
	// versions copied the config's permission_mode, model and workdir into
	// every chat on first use, so later config changes never reached it
	// (a chat started under bypassPermissions stayed there). Those copies
	// cannot be told apart from real choices, so all three are dropped:
	// every chat follows the current config until its users choose again.
	`
UPDATE chats SET permission_mode = '', model = '', workdir = '';
`,
	// 6: away from the keyboard: tokens per turn (for /usage), the last
	// known subscription windows, prompts waiting for a limit to reset,
	// scheduled prompts, and a few named settings (the scheduler's pause,
	// which budget warnings were given).
	`
ALTER TABLE turns ADD COLUMN input_tokens       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN output_tokens      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN cache_read_tokens  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
-- Budgets and /usage read every chat's turns by time.
CREATE INDEX turns_started ON turns (started_at);

CREATE TABLE limit_windows (
	window      TEXT    PRIMARY KEY, -- five_hour, seven_day, ...
	status      TEXT    NOT NULL DEFAULT '',
	utilization REAL    NOT NULL DEFAULT -1,
	resets_at   INTEGER NOT NULL DEFAULT 0,
	updated_at  INTEGER NOT NULL
);

CREATE TABLE limit_retries (
	token      TEXT    PRIMARY KEY,
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	reply_to   INTEGER NOT NULL DEFAULT 0,
	message_id INTEGER NOT NULL DEFAULT 0, -- the notice with the buttons
	input      BLOB    NOT NULL,           -- the prompt, as JSON
	label      TEXT    NOT NULL DEFAULT '',
	window     TEXT    NOT NULL DEFAULT '', -- the limit's window: five_hour, ...
	resets_at  INTEGER NOT NULL,
	state      TEXT    NOT NULL CHECK (state IN ('asked', 'scheduled', 'sent', 'dropped')),
	decided_by INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
CREATE INDEX limit_retries_due ON limit_retries (resets_at) WHERE state = 'scheduled';

CREATE TABLE schedules (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	chat_id       INTEGER NOT NULL,
	thread_id     INTEGER NOT NULL DEFAULT 0,
	source        TEXT    NOT NULL CHECK (source IN ('chat', 'config')),
	config_key    TEXT    NOT NULL DEFAULT '',
	cron          TEXT    NOT NULL DEFAULT '', -- '' for a one-off (/at)
	timezone      TEXT    NOT NULL DEFAULT '',
	prompt        TEXT    NOT NULL,
	fresh_session INTEGER NOT NULL DEFAULT 0,
	next_run      INTEGER NOT NULL,            -- 0: will not run again
	last_run      INTEGER NOT NULL DEFAULT 0,
	created_by    INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL
);
CREATE INDEX schedules_chat ON schedules (chat_id, thread_id);
CREATE INDEX schedules_due ON schedules (next_run) WHERE next_run > 0;
CREATE UNIQUE INDEX schedules_config ON schedules (config_key) WHERE source = 'config';

CREATE TABLE settings (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
`,
	// 7: projects. A chat keeps the project and branch its users chose
	// ('' follows the config), the session each (chat, project, branch)
	// resumes, and every session it ran, for /sessions. Existing chats
	// ran in claude.workdir, the project "default": their sessions are
	// filed there, with the turns and cost the turns table recorded.
	`
ALTER TABLE chats ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE chats ADD COLUMN branch  TEXT NOT NULL DEFAULT '';

CREATE TABLE project_sessions (
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	project    TEXT    NOT NULL,
	branch     TEXT    NOT NULL DEFAULT '',
	session_id TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (chat_id, thread_id, project, branch)
);

CREATE TABLE sessions (
	session_id   TEXT    PRIMARY KEY,
	chat_id      INTEGER NOT NULL,
	thread_id    INTEGER NOT NULL DEFAULT 0,
	project      TEXT    NOT NULL,
	branch       TEXT    NOT NULL DEFAULT '',
	first_prompt TEXT    NOT NULL DEFAULT '',
	started_at   INTEGER NOT NULL,
	last_active  INTEGER NOT NULL,
	turns        INTEGER NOT NULL DEFAULT 0,
	cost_usd     REAL    NOT NULL DEFAULT 0
);
CREATE INDEX sessions_chat ON sessions (chat_id, thread_id, last_active);

INSERT INTO project_sessions (chat_id, thread_id, project, session_id)
	SELECT chat_id, thread_id, 'default', session_id FROM chats WHERE session_id <> '';
INSERT INTO sessions (session_id, chat_id, thread_id, project, started_at, last_active, turns, cost_usd)
	SELECT session_id, min(chat_id), min(thread_id), 'default', min(started_at), max(started_at + duration_ns), count(*), sum(cost_usd)
	FROM turns WHERE session_id <> '' GROUP BY session_id;
INSERT OR IGNORE INTO sessions (session_id, chat_id, thread_id, project, started_at, last_active)
	SELECT session_id, chat_id, thread_id, 'default', last_active, last_active FROM chats WHERE session_id <> '';
`,
	// 8: the project each turn ran in, for per-project budgets. Turns run
	// since migration 7 are filed under their session's project; older
	// ones (and any whose session is unknown) ran in claude.workdir, the
	// project "default".
	`
ALTER TABLE turns ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
UPDATE turns SET project = (SELECT s.project FROM sessions s WHERE s.session_id = turns.session_id)
	WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = turns.session_id);
CREATE INDEX turns_project ON turns (project, started_at);
`,
	// 9: the project and branch a prompt a limit rejected ran in, so its
	// retry goes back there. Older rows keep '' (wherever the chat works
	// when it fires).
	`
ALTER TABLE limit_retries ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE limit_retries ADD COLUMN branch TEXT NOT NULL DEFAULT '';
`,
	// 10: a schedule's run, or a limit retry ('firing'), that fired but
	// has not reached the CLI yet (it waits for a busy chat), so a restart
	// meanwhile runs it instead of losing it. SQLite cannot change a CHECK
	// constraint, so limit_retries is copied into a table that allows
	// 'firing'.
	`
ALTER TABLE schedules ADD COLUMN pending_run INTEGER NOT NULL DEFAULT 0;

CREATE TABLE limit_retries_new (
	token      TEXT    PRIMARY KEY,
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	reply_to   INTEGER NOT NULL DEFAULT 0,
	message_id INTEGER NOT NULL DEFAULT 0, -- the notice with the buttons
	input      BLOB    NOT NULL,           -- the prompt, as JSON
	label      TEXT    NOT NULL DEFAULT '',
	window     TEXT    NOT NULL DEFAULT '', -- the limit's window: five_hour, ...
	resets_at  INTEGER NOT NULL,
	state      TEXT    NOT NULL CHECK (state IN ('asked', 'scheduled', 'firing', 'sent', 'dropped')),
	decided_by INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	project    TEXT    NOT NULL DEFAULT '',
	branch     TEXT    NOT NULL DEFAULT ''
);
INSERT INTO limit_retries_new (token, chat_id, thread_id, reply_to, message_id, input, label, window, resets_at, state,
	decided_by, created_at, project, branch)
	SELECT token, chat_id, thread_id, reply_to, message_id, input, label, window, resets_at, state,
	decided_by, created_at, project, branch FROM limit_retries;
DROP TABLE limit_retries;
ALTER TABLE limit_retries_new RENAME TO limit_retries;
CREATE INDEX limit_retries_due ON limit_retries (resets_at) WHERE state = 'scheduled';
`,
	// 11: who wrote a prompt a limit rejected, so its retry is not sent
	// for a user the operator has since taken off the allow-list. Older
	// rows keep 0 (nobody is checked; the chat still is).
	`
ALTER TABLE limit_retries ADD COLUMN created_by INTEGER NOT NULL DEFAULT 0;
`,
	// 12: webhooks ([[triggers]]). A delivery accepted for a trigger is a
	// run kept until its prompt has reached the CLI, so a restart while it
	// waits for a busy chat still runs it; and the deliveries seen (by id
	// and by body hash, per trigger) are kept for the replay window, so a
	// delivery sent again is caught across a restart too.
	`
CREATE TABLE trigger_runs (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	trigger    TEXT    NOT NULL,
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	project    TEXT    NOT NULL DEFAULT '',
	prompt     TEXT    NOT NULL,
	delivery   TEXT    NOT NULL DEFAULT '', -- X-GitHub-Delivery, '' when the sender set none
	event      TEXT    NOT NULL DEFAULT '', -- X-GitHub-Event
	created_at INTEGER NOT NULL
);

CREATE TABLE webhook_seen (
	key     TEXT    PRIMARY KEY,
	seen_at INTEGER NOT NULL
);
CREATE INDEX webhook_seen_at ON webhook_seen (seen_at);
`,
	// 13: wake-ups Claude set: pending while its CLI waits for them (so a
	// start after a kill can name the ones the killed CLI took with it),
	// then, once a closed CLI lost them, offered again with a ▶️ Re-arm
	// button that must work after a restart.
	`
CREATE TABLE lost_wakeups (
	token      TEXT    PRIMARY KEY,
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	session_id TEXT    NOT NULL,
	project    TEXT    NOT NULL DEFAULT '',
	branch     TEXT    NOT NULL DEFAULT '',
	wakeup     BLOB    NOT NULL, -- the wake-up, as the bridge encoded it
	why        TEXT    NOT NULL DEFAULT '',
	state      TEXT    NOT NULL CHECK (state IN ('pending', 'offered', 'rearmed')),
	decided_by INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
`,
	// 14: the effort level a chat chose (/effort; '' follows the config),
	// and each chat's (or topic's) control panel (/panel): the message
	// showing it and the token its buttons carry, so they work after a
	// restart.
	`
ALTER TABLE chats ADD COLUMN effort TEXT NOT NULL DEFAULT '';

CREATE TABLE panels (
	chat_id    INTEGER NOT NULL,
	thread_id  INTEGER NOT NULL DEFAULT 0,
	message_id INTEGER NOT NULL,
	token      TEXT    NOT NULL,
	pinned     INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (chat_id, thread_id)
);
`,
}

// migrate applies the migrations the database has not seen, all in one
// transaction: a crash midway leaves the old schema, never half of a new one.
// The version is read inside the (immediate) transaction so two processes
// opening the same new database cannot both apply migration 1.
func (s *Store) migrate(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var version int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("schema version %d, this binary knows up to %d: %w",
				version, len(migrations), ErrSchemaTooNew)
		}
		for i := version; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("apply migration %d: %w", i+1, err)
			}
			// PRAGMA takes no bound parameters; i is ours, not input.
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
				return fmt.Errorf("record schema version %d: %w", i+1, err)
			}
		}
		return nil
	})
}

// SchemaVersion reports the database's schema version, for diagnostics.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
