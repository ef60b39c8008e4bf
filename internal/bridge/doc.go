// Package bridge is untether's Telegram side, as cmd/untether wires it: New
// builds the engine (package chat) with the modules, Run polls Telegram and
// serves the chats, Shutdown drains them. What a chat does with a message,
// a button press or the CLI's events is described in package chat's doc.
package bridge
