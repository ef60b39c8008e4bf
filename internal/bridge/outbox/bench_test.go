package outbox

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// heldOutbox returns an outbox whose chats each have a send stuck in flight,
// so that benchmarks measure enqueueing and coalescing, not the fake. stop
// releases and discards it.
func heldOutbox(b *testing.B, chats int) (o *Outbox, msgs []*Message, stop func()) {
	b.Helper()
	clock := newAutoClock()
	tg := newFakeTG(clock)
	o = New(tg, Options{Clock: clock, Jitter: noJitter, GlobalRate: rate.Inf})
	tg.hold()
	msgs = make([]*Message, chats)
	for i := range msgs {
		msgs[i] = o.Send(bg, ChatKey{Chat: int64(i + 1)}, Low, Content{Text: "start"}, SendOptions{})
	}
	waitFor(b, "sends in flight", func() bool { return tg.Started() == chats })
	return o, msgs, func() {
		ctx, cancel := context.WithCancel(bg)
		cancel()
		_ = o.Close(ctx) // cancels the held calls
	}
}

var progressTexts = func() []string {
	out := make([]string, 256)
	for i := range out {
		out[i] = fmt.Sprintf("<b>Working</b> · step %d\n<code>go test ./...</code>", i)
	}
	return out
}()

// BenchmarkEditCoalesce: a progress message receives edits faster than it
// may be edited; each Edit replaces the pending one.
func BenchmarkEditCoalesce(b *testing.B) {
	o, msgs, stop := heldOutbox(b, 1)
	defer stop()
	kb := approveKeyboard("bench")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o.Edit(bg, msgs[0], Low, Content{Text: progressTexts[i%len(progressTexts)], Keyboard: kb})
	}
}

// BenchmarkEditCoalesceParallel: many goroutines editing progress messages
// of 1,000 chats at once, which measures lock contention on the chat map
// and chat mutexes.
func BenchmarkEditCoalesceParallel(b *testing.B) {
	const chats = 1000
	o, msgs, stop := heldOutbox(b, chats)
	defer stop()
	var next atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(7919) // spread goroutines over different chats
		for pb.Next() {
			i++
			o.Edit(bg, msgs[i%chats], Low, Content{Text: progressTexts[i%uint64(len(progressTexts))]})
		}
	})
}

// BenchmarkSendDelivered: end to end through workers and the fake with
// pacing disabled: what the outbox itself costs per delivered message.
func BenchmarkSendDelivered(b *testing.B) {
	tg := newFakeTG(realClock{})
	o := New(tg, Options{
		PrivateInterval: time.Nanosecond, PrivateBurst: 1 << 20,
		GlobalRate: rate.Inf,
	})
	defer o.Close(bg)
	const chats = 100
	var next atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var last *Message
		for pb.Next() {
			i := next.Add(1)
			last = o.Send(bg, ChatKey{Chat: int64(i%chats + 1)}, High, Content{Text: "answer"}, SendOptions{})
		}
		if last != nil {
			<-last.Sent().Done()
		}
	})
	b.StopTimer()
	waitFor(b, "all delivered", func() bool { return o.Stats().Queued == 0 })
}

// BenchmarkChatFootprint reports the memory held per busy chat: its state,
// one in-flight send, one coalesced pending edit and the worker goroutine.
func BenchmarkChatFootprint(b *testing.B) {
	const chats = 2000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		o, msgs, stop := heldOutbox(b, chats)
		for _, m := range msgs {
			o.Edit(bg, m, Low, Content{Text: progressTexts[0]})
		}
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/chats, "heap-B/chat")
		b.ReportMetric(float64(after.StackInuse-before.StackInuse)/chats, "stack-B/chat")
		runtime.KeepAlive(msgs)
		stop()
		b.StartTimer()
	}
}
