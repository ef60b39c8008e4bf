// Package bridge connects Telegram to runner sessions: it polls updates, routes
// them into one actor per chat (or forum topic), turns runner events into
// progress, answer and approval messages through a paced outbox, and persists
// offsets, sessions, live messages and approvals so a restart loses nothing. It
// is the only package that talks to the Telegram Bot API.
package bridge
