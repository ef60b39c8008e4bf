package state

import (
	"context"
	"fmt"
)

// noteContinued marks an interrupted approval whose Continue button was
// pressed, so a second press (or one replayed after a crash) does nothing.
const noteContinued = "continued"

// ContinueApproval claims an approval that a restart interrupted, for its
// ▶️ Continue button: it reports true exactly once per token, and false for
// any approval that was not interrupted or was continued already.
func (s *Store) ContinueApproval(ctx context.Context, token string) (bool, error) {
	unlock, err := s.lockWrite(ctx)
	if err != nil {
		return false, fmt.Errorf("continue approval %s: %w", token, err)
	}
	defer unlock()
	res, err := s.db.ExecContext(ctx, `
UPDATE approvals SET note = ? WHERE token = ? AND decision = ? AND note <> ?`,
		noteContinued, token, string(DecisionInterrupted), noteContinued)
	if err != nil {
		err = classifyWrite(err)
		return false, fmt.Errorf("continue approval %s: %w", token, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("continue approval %s: %w", token, err)
	}
	return n == 1, nil
}
