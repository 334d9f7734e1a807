package jobs

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/locrisk/locrisk"
)

// fullQueue is a job queue on a full disk: a job is always runnable, but
// every claim, a write, fails. It counts the claims, which must not spin
// while the disk stays full.
type fullQueue struct {
	locrisk.JobQueue // nil: nothing else is called
	mu               sync.Mutex
	claims           int
}

func (q *fullQueue) ClaimJob(context.Context, string, time.Duration, time.Time) (locrisk.Job, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	return locrisk.Job{}, false, errors.New("claim job: database or disk is full")
}

// TestClaimFailuresDoNotSpin: while its claims cannot commit, the
// scheduler claims a few times in ten seconds, whatever its poll interval
// and however many workers it has, and logs one line (internal/queue,
// claimFailures).
func TestClaimFailuresDoNotSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &fullQueue{}
		var logs syncBuilder
		s := New(q, &fakeEngine{}, Config{Workers: 16, PollInterval: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		for range 1000 {
			s.Notify() // wake-ups, as job creations send, do not end a pause
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		q.mu.Lock()
		claims := q.claims
		q.mu.Unlock()
		lines := strings.Count(logs.String(), "claim failed")
		t.Logf("10 s of failing claims: %d claims, %d error lines", claims, lines)
		if claims > 12 {
			t.Errorf("%d claims in 10 s while every claim fails, want at most 12", claims)
		}
		if lines != 1 {
			t.Errorf("%d claim error lines in 10 s, want 1", lines)
		}
	})
}

// syncBuilder is a strings.Builder for concurrent loggers.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
