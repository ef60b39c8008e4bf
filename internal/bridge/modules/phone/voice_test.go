package phone

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
)

func TestKeptVoiceNotes(t *testing.T) {
	cfg := config.Default()
	cfg.State.Dir = t.TempDir()
	job := voiceJob{ID: "abc_DEF-123", Chat: 5, MsgID: 9, Kind: "voice note", Received: time.Now()}
	require.NoError(t, keepVoice(&cfg, job, []byte("OggS")))
	got, err := loadKept(&cfg, job.ID)
	require.NoError(t, err)
	assert.True(t, got.Kept)
	assert.Equal(t, job.MsgID, got.MsgID)
	for _, bad := range []string{"", "../x", "a/b", "x.json"} {
		_, err := loadKept(&cfg, bad)
		assert.ErrorIs(t, err, os.ErrNotExist, "%q", bad)
	}
	old := voiceJob{ID: "old", Received: time.Now().Add(-25 * time.Hour)}
	require.NoError(t, keepVoice(&cfg, old, []byte("x")))
	_, err = loadKept(&cfg, "old")
	assert.ErrorIs(t, err, os.ErrNotExist, "older than a day is gone")
	assert.NoFileExists(t, keptPath(&cfg, "old"), "and deleted")
}

// TestSettleMovedFiles: a crash between journaling a file's send and moving
// it to sent/ leaves it in the outbox; the next start moves it before the
// journal is replayed, so the next turn does not send it again.
