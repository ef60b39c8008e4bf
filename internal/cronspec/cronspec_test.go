package cronspec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAndNext(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	// Friday 2026-11-27 10:00 in Paris.
	from := time.Date(2026, 11, 27, 10, 0, 0, 0, paris)
	tests := []struct {
		expr string
		want time.Time
	}{
		{"0 9 * * 1-5", time.Date(2026, 11, 30, 9, 0, 0, 0, paris)}, // Monday
		{"  30   10 * * * ", time.Date(2026, 11, 27, 10, 30, 0, 0, paris)},
		{"@daily", time.Date(2026, 11, 28, 0, 0, 0, 0, paris)},
		{"@every 2h", from.Add(2 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			s, err := Parse(tt.expr)
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(s.Next(from, paris)), "next %s, want %s", s.Next(from, paris), tt.want)
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, expr := range []string{"", "0 9 * *", "0 0 9 * * *", "61 * * * *", "@every 30s", "CRON_TZ=UTC 0 9 * * *", "@sometimes"} {
		t.Run(expr, func(t *testing.T) {
			_, err := Parse(expr)
			assert.ErrorIs(t, err, ErrInvalid)
		})
	}
}
