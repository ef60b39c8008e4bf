package state_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/untether/untether/internal/bridge/state"
)

func BenchmarkSetLastUpdateID(b *testing.B) {
	ctx := context.Background()
	s := newStore(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.SetLastUpdateID(ctx, int64(i+1)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecideApproval(b *testing.B) {
	ctx := context.Background()
	s := newStore(b)
	key := state.ChatKey{Chat: 1}
	for i := 0; i < b.N; i++ {
		if err := s.PutApproval(ctx, sampleApproval(fmt.Sprint("t", i), key, t0)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.DecideApproval(ctx, fmt.Sprint("t", i), state.DecisionAllow, 1, t0.Add(time.Second), ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnqueueAckOutbox(b *testing.B) {
	ctx := context.Background()
	s := newStore(b)
	item := state.OutboxItem{Key: state.ChatKey{Chat: 1, Thread: 2}, Kind: "send",
		Payload: []byte(`{"chat_id":1,"text":"hello, this is a typical short answer"}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id, err := s.EnqueueOutbox(ctx, item)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.AckOutbox(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// Many chat actors writing at once: the in-process write queue is the
// bottleneck by design, so this should stay close to the serial numbers.
func BenchmarkSetLastUpdateIDParallel(b *testing.B) {
	ctx := context.Background()
	s := newStore(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var i int64
		for pb.Next() {
			i++
			if err := s.SetLastUpdateID(ctx, i); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
