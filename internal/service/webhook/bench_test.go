package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// forgetful remembers nothing, so every iteration is a fresh delivery.
type forgetful struct{}

func (forgetful) Claim(context.Context, string, time.Time) (bool, error) { return true, nil }
func (forgetful) Release(context.Context, string) error                  { return nil }

// BenchmarkDelivery: what one accepted delivery of the 22 KB workflow_run
// payload costs the daemon: read, verify the HMAC, decode, hash for
// replays, render the prompt, Fire (a fake that keeps nothing).
func BenchmarkDelivery(b *testing.B) {
	body := payload(b, "workflow_run.completed.failure.json")
	h := New(Options{Fire: discard{}, Seen: forgetful{}, Log: zerolog.Nop()})
	require.NoError(b, h.SetTriggers(triggers))
	sig := Sign(ciSecret, body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/hooks/ci-failed", bytes.NewReader(body))
		req.SetPathValue("name", "ci-failed")
		req.Header.Set(SignatureHeader, sig)
		req.Header.Set(EventHeader, "workflow_run")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkRefusedSignature: what a delivery with a wrong signature costs
// (read and one HMAC), the price of a flood of forgeries.
func BenchmarkRefusedSignature(b *testing.B) {
	body := payload(b, "workflow_run.completed.failure.json")
	h := New(Options{Fire: discard{}, Seen: forgetful{}, Log: zerolog.Nop()})
	require.NoError(b, h.SetTriggers(triggers))
	sig := Sign("wrong", body)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/hooks/ci-failed", bytes.NewReader(body))
		req.SetPathValue("name", "ci-failed")
		req.Header.Set(SignatureHeader, sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

type discard struct{}

func (discard) Fire(context.Context, Run) error { return nil }
