// Package config loads untether's single TOML file: it decodes strictly
// (unknown keys are errors), applies named defaults, and validates everything
// at once so a user sees every problem in one run. Components receive typed
// values, never the file.
//
// Loading runs in a fixed order: decode over Default() (a *DecodeError, with
// line and column, if the TOML is malformed or a value has the wrong type),
// reject unknown or wrongly cased keys, let UNTETHER_TELEGRAM_BOT_TOKEN
// replace the file's token, expand a leading ~ from HOME (also in each
// [voice] command entry), read [voice] api_key_env, then validate. All
// problems from the last three steps come back together as one
// *ValidationError sorted by key.
//
// The bot token and the voice API key are Secrets: every formatting and encoding path prints
// "[redacted]", and no error message quotes it, so configs and errors can be
// logged freely. Validation checks only what can be known from the file and
// the filesystem (the working directory exists); whether the claude binary
// runs is left to `untether check`.
//
// The schema is sections of keys, plus two lists of tables, [[schedules]]
// and [[triggers]], which Diff and Dump treat as a single key each, and one
// map of tables,
// [projects.<name>] (projects.go), likewise a single key: repositories the
// bot can also work in, each overriding [claude]'s keys (a project's
// allowed_modes may only narrow the global list) and optionally living on
// another host reached with ssh. claude.workdir is the project named
// "default"; Config.Project resolves a name to the settings a session in it
// runs with. A project may have its own budget, [projects.<name>.budget]
// (dumped as an inline table), which caps its turns within [budget]. Projects
// are reloadable: the next spawn uses what SIGHUP loaded. A [[schedules]]
// entry may name a project, which must exist.
//
// [http] and [[triggers]] (service.go) configure running as a service: the
// local listener's address, and webhooks that start a turn. A trigger's
// chat must be one untether serves and its project must exist, as for a
// schedule; its secret (inline or through secret_env) is a Secret; its
// prompt is parsed with internal/service/hookprompt, the parser the
// webhook handler uses. [[triggers]] are reloadable (the daemon gives the
// webhook handler the new list on SIGHUP); http.listen needs a restart.
//
// untether.example.toml at the repository root documents every key with its
// default; tests keep it complete and in step with Default.
package config
