// Package export is /export: the current session's conversation as a
// Markdown document, sent to the chat. It is read from the CLI's own
// transcript of the session (internal/transcript's Export: what each
// person asked, Claude's answers, each tool call in one line, the API
// calls and tokens of each turn, the CLI's saved running cost), and ends
// with untether's own record of the session: its turns and what they cost
// as the CLI reported each, which the transcript lacks while the CLI runs.
//
// A conversation is private: /export works in private chats, and in
// groups and forum topics only when [files] export_in_groups allows it,
// since everyone in them reads the document. A project on another host
// keeps its transcripts there, out of untether's reach: /export says so.
// The document is written to the project's .untether/sent and sent from
// the descriptor written, as /get's zips are.
package export
