// Package panel is /panel (issue 27 §1): one message per chat or forum
// topic showing its model, effort, permission mode, and project and
// branch where there is a choice, with a button for each and for a new
// session, the sessions and cancel.
//
// A button runs the very command it stands for (RunCommand): the menus of
// /model, /effort, /mode, /project and /branch, /new, /sessions, /cancel,
// so a press follows the same rules as typing it (allowed_modes, the
// models list, a busy chat) and a refusal says why. The panel is edited in
// place whenever what it shows may have changed: the chat's record was
// saved (a command, a menu, a mode the CLI switched to, a resumed
// session) or the config was reloaded (the engine's OnSettingsChanged),
// and at each start, since the config may have changed meanwhile. Its
// message id and the token its buttons carry are in the state database,
// so after a restart its buttons keep working (a StoredButton) and it is
// redrawn. With [telegram] pin_panel it is pinned, and the panel it
// replaces unpinned.
//
// A panel the user deleted stays deleted: its messages are
// outbox.NoReplace, so the edit that finds it gone (the first change
// after the deletion, or the redraw at a start) sends nothing and says so
// (OutcomeGone, awaited off the actor), and the panel is forgotten: its
// record and pin in the state database and the chat's own note of it, so
// nothing edits it again and /panel makes a fresh one. An old panel that
// a newer one replaces is likewise not sent again to say so.
package panel
