// Package compact is what an answer says about a context that fills up
// (issue 27 §3): at [render] context_warn_at the footer warns and the
// answer carries 🗜 Compact, which sends /compact to the session (the CLI's
// compaction then answers with the tokens before and after, as a typed
// /compact does); at context_full_at a note also says what happens when
// the context runs out.
//
// What the CLI does about a full context is learnt as cheaply as it can
// be truthfully: DISABLE_COMPACT and DISABLE_AUTO_COMPACT are read from
// the environment each CLI is started with (OnSpawn), which is exact for
// whether /compact works, so whether the button is offered. Where the CLI
// compacts by itself, or whether its settings turned that off, only the
// process knows (get_context_usage): it is asked once per process and
// model, the first time an answer reaches the warning, off the actor, and
// the answers after it say what it answered; until then the note says
// what is true either way.
package compact
