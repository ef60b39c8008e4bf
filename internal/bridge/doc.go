// Package bridge connects Telegram to runner sessions: it polls updates, routes
// them into one actor per chat (or forum topic), turns runner events into
// progress, answer and approval messages through a paced outbox, and persists
// offsets, sessions, live messages and approvals so a restart loses nothing. It
// is the only package that talks to the Telegram Bot API.
//
// An approval is answered to the CLI first and recorded in the audit log only
// then, so the log never claims a decision Claude did not get. AskUserQuestion
// requests are asked one question after another in one message (toggles and
// Done for a multi-select question); a Telegram reply to that message is the
// current question's free-text answer and never reaches Claude as a prompt.
package bridge
