package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Percentile returns the p-th percentile (0..100) of xs by the
// nearest-rank method, 0 for no samples. xs is not modified.
func Percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// Ms is d in (fractional) milliseconds, for b.ReportMetric.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

var (
	resultAtRe = regexp.MustCompile(ResultMarker + ` (\d+)`)
	tagRe      = regexp.MustCompile(regexp.QuoteMeta(TagPrefix) + `([A-Za-z0-9_-]+)`)
	stepsRe    = regexp.MustCompile(`(\d+) steps?\b`)
)

// ResultAt extracts the fake CLI's result time and the turn tag from a
// final answer's text.
func ResultAt(text string) (at time.Time, tag string, ok bool) {
	m := resultAtRe.FindStringSubmatch(text)
	t := tagRe.FindStringSubmatch(text)
	if m == nil || t == nil {
		return time.Time{}, "", false
	}
	ns, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return time.Time{}, "", false
	}
	return time.Unix(0, ns), t[1], true
}

// StepsShown is the step count a progress text shows ("… · 12 steps"), -1
// when it shows none.
func StepsShown(text string) int {
	m := stepsRe.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// StepLog is what the fake CLI recorded for one turn.
type StepLog struct {
	Steps  []time.Time // Steps[k-1]: when tool_use frame k was written
	Result time.Time
}

// ReadStepLog reads a <tag>.steps file written by the fake CLI.
func ReadStepLog(path string) (StepLog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return StepLog{}, fmt.Errorf("read step log: %w", err)
	}
	var l StepLog
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		ns, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return StepLog{}, fmt.Errorf("read step log %s: %w", path, err)
		}
		if k == "result" {
			l.Result = time.Unix(0, ns)
			continue
		}
		l.Steps = append(l.Steps, time.Unix(0, ns))
	}
	return l, nil
}

// Visible is one successful render of a progress message as Telegram
// received it: when, and how many steps it showed.
type Visible struct {
	At    time.Time
	Steps int
}

// Staleness returns, for every step k of log, how long after the CLI wrote
// it a render showing at least k steps reached Telegram; missing counts the
// steps no render ever showed.
func Staleness(log StepLog, renders []Visible) (stale []time.Duration, missing int) {
	for k, at := range log.Steps {
		var first time.Time
		for _, r := range renders {
			if r.Steps >= k+1 && !r.At.Before(at) && (first.IsZero() || r.At.Before(first)) {
				first = r.At
			}
		}
		if first.IsZero() {
			missing++
			continue
		}
		stale = append(stale, first.Sub(at))
	}
	return stale, missing
}

// Window replays one of the outbox's sliding windows (at most N calls in
// any span of Per) over the calls Telegram saw, to estimate when the
// outbox could next have called. Arrival times stand in for the outbox's
// send times, so it is an estimate within the network delay.
type Window struct {
	n     int
	per   time.Duration
	times []time.Time // oldest first
}

// NewWindow is a window of n calls per span per.
func NewWindow(n int, per time.Duration) *Window { return &Window{n: n, per: per} }

// Take records a call at t (calls must come in time order).
func (w *Window) Take(t time.Time) { w.times = append(w.times, t) }

// ReadyAt is the earliest time ≥ t at which a call leaving keep of the N
// slots free fits in the window, without recording it.
func (w *Window) ReadyAt(t time.Time, keep int) time.Time {
	allowed := max(w.n-keep, 1)
	var in []time.Time
	for _, c := range w.times {
		if c.After(t.Add(-w.per)) {
			in = append(in, c)
		}
	}
	if len(in) < allowed {
		return t
	}
	return in[len(in)-allowed].Add(w.per)
}

// Bucket replays a private chat's token bucket in the outbox (N calls at
// once, then one more per Every) over the calls Telegram saw, as Window
// does for the windows.
type Bucket struct {
	n     int
	every time.Duration
	full  time.Time // when the bucket holds n calls again
}

// NewBucket is a bucket of n calls that gains one per every.
func NewBucket(n int, every time.Duration) *Bucket { return &Bucket{n: n, every: every} }

// Take records a call at t (calls must come in time order).
func (b *Bucket) Take(t time.Time) {
	if b.full.Before(t) {
		b.full = t
	}
	b.full = b.full.Add(b.every)
}

// ReadyAt is the earliest time ≥ t at which a call leaving keep of the N
// calls in the bucket fits, without recording it.
func (b *Bucket) ReadyAt(t time.Time, keep int) time.Time {
	if !b.full.After(t) {
		return t // full
	}
	allowed := time.Duration(max(b.n-1-keep, 0)) * b.every
	if d := b.full.Sub(t) - allowed; d > 0 {
		return t.Add(d)
	}
	return t
}

// ProcRSS is the resident set size of pid in bytes (VmRSS).
func ProcRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmRSS:") }

// ProcPeakRSS is the peak resident set size of pid in bytes (VmHWM).
func ProcPeakRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmHWM:") }

// procStatusBytes reads a "<field> <n> kB" line of /proc/<pid>/status.
func procStatusBytes(pid int, field string) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, fmt.Errorf("read status of %d: %w", pid, err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err != nil {
					return 0, fmt.Errorf("parse %s of %d: %w", field, pid, err)
				}
				return kb << 10, nil
			}
		}
	}
	return 0, nil // a zombie has no VmRSS
}

// Descendants lists the live processes below pid (children, grandchildren…).
func Descendants(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	parent := map[int]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// comm may contain spaces and parentheses: fields start after the last ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		pp, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		parent[p] = pp
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q != 0; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
			if _, ok := parent[q]; !ok {
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// TreeRSS sums VmRSS over pids, skipping processes that exited meanwhile.
func TreeRSS(pids []int) int64 {
	var sum int64
	for _, p := range pids {
		if n, err := ProcRSS(p); err == nil {
			sum += n
		}
	}
	return sum
}

// CPUTime is the process's user+system CPU time so far (children excluded).
func CPUTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc.
const clockTicks = 100

// ProcCPU is the user+system CPU time pid has used (children excluded).
func ProcCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("read stat of %d: %w", pid, err)
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse stat of %d: no comm", pid)
	}
	// After comm: state(3) ppid(4) … utime(14) stime(15).
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("parse stat of %d: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse stat of %d: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}
