package state

import (
	"context"
	"database/sql"
	"fmt"
)

// MigrateChat moves a chat's state to the id Telegram gave it when a group
// became a supergroup (migrate_to_chat_id): its sessions and settings (one
// row per topic), its projects' sessions and session history, turns,
// approvals, undelivered outbox items, the schedules the chat made and its
// prompts waiting for a limit to reset. Live message records and control
// panels are dropped: their message ids belong to the old chat and cannot
// be edited in the new one. Where the new chat already has a
// row for a topic with history of its own, that row wins. Migrating again,
// or a chat with no state, changes nothing.
func (s *Store) MigrateChat(ctx context.Context, from, to ChatID) error {
	if from == to {
		return nil
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		stmts := []string{
			// turns reference chats; checked at commit, once both moved.
			`PRAGMA defer_foreign_keys = ON`,
			// A row the new chat got before the migration was seen (a message
			// in the supergroup first) carries nothing yet: the old one wins.
			`DELETE FROM chats WHERE chat_id = :to AND turns = 0 AND session_id = ''
				AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.chat_id = :to AND t.thread_id = chats.thread_id)`,
			`UPDATE OR IGNORE chats SET chat_id = :to WHERE chat_id = :from`,
			`UPDATE turns SET chat_id = :to WHERE chat_id = :from`,
			`UPDATE OR IGNORE project_sessions SET chat_id = :to WHERE chat_id = :from`,
			`DELETE FROM project_sessions WHERE chat_id = :from`,
			`UPDATE sessions SET chat_id = :to WHERE chat_id = :from`,
			`UPDATE approvals SET chat_id = :to WHERE chat_id = :from`,
			`UPDATE outbox SET chat_id = :to WHERE chat_id = :from`,
			// A file schedule names its chat in the config; the file wins.
			`UPDATE schedules SET chat_id = :to WHERE chat_id = :from AND source = 'chat'`,
			`UPDATE limit_retries SET chat_id = :to WHERE chat_id = :from`,
			`DELETE FROM live_messages WHERE chat_id = :from`,
			// A control panel is a message of the old chat, like a live one.
			`DELETE FROM panels WHERE chat_id = :from`,
			`DELETE FROM chats WHERE chat_id = :from`,
		}
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q, sql.Named("from", int64(from)), sql.Named("to", int64(to))); err != nil {
				return fmt.Errorf("%.40s…: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate chat %d to %d: %w", from, to, err)
	}
	return nil
}
