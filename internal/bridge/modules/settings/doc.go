// Package settings is /mode and /model: a chat's permission mode and model,
// within what the operator's config allows.
//
// A chat stores only what its users chose with a command; everything else
// comes from the current config each time the chat's session is created
// (chat's spawn.go), so a restart (or SIGHUP, for the reloadable keys)
// reaches existing chats. [claude] allowed_modes is the ceiling for every
// chat, and a project's allowed_modes may narrow it (modes.go); /model
// tells the truth about a model the CLI refuses (models.go).
package settings
