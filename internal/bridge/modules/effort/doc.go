// Package effort is /effort: the effort level Claude works at (the CLI's
// --effort, which it sends to the API as output_config.effort), chosen per
// chat or forum topic and stored with its record like /mode and /model.
// [claude] effort and a project's effort are the default of the chats that
// chose none.
//
// A choice reaches the CLI at its next start (OnSpawn: --effort=<level>),
// and at once when one runs: the live change (runner's SetEffort) says
// which level the model then really applies (a model may apply none, or
// take max as high), and the reply says that, not the level asked for.
// An answer's footer names the effort only when it is known what the turn
// ran with: what the live process applied when the turn started (read
// with get_settings, applied.go), and nothing changed it during the turn.
package effort
