package webhookworker_test

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
	"github.com/locrisk/locrisk/internal/webhookworker"
)

// fullOutbox is a webhook outbox on a full disk: its reads work, so a
// delivery is always due (NextWebhookDue), but every claim, a write, fails.
// It counts the claims.
type fullOutbox struct {
	mu     sync.Mutex
	claims int
}

func (o *fullOutbox) ClaimWebhookDelivery(context.Context, time.Duration, locrisk.DeliveryLimits, time.Time) (locrisk.DeliveryTask, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.claims++
	return locrisk.DeliveryTask{}, false, errors.New("claim webhook delivery: database or disk is full")
}

func (o *fullOutbox) NextWebhookDue(_ context.Context, _ locrisk.DeliveryLimits, now time.Time) (time.Time, bool, error) {
	return now, true, nil
}

func (o *fullOutbox) RecordWebhookAttempt(context.Context, locrisk.DeliveryTask, locrisk.DeliveryAttempt, time.Time) (string, error) {
	return "", errors.New("not claimed")
}

func (o *fullOutbox) ReleaseWebhookDelivery(context.Context, locrisk.DeliveryTask) error {
	return errors.New("not claimed")
}

// TestClaimFailuresDoNotSpin: while its claims cannot commit, the delivery
// worker claims a few times in ten seconds and logs one line, where it
// claimed (and logged) about 690 times a second, on a quarter of a core,
// before its runner backed off (internal/queue, claimFailures).
func TestClaimFailuresDoNotSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &fullOutbox{}
		var logs strings.Builder
		var mu sync.Mutex
		w := webhookworker.New(st, webhookworker.Config{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		time.Sleep(10 * time.Second)
		cancel()
		<-done
		st.mu.Lock()
		claims := st.claims
		st.mu.Unlock()
		mu.Lock()
		lines := strings.Count(logs.String(), "claim failed")
		mu.Unlock()
		t.Logf("10 s of failing claims: %d claims, %d error lines", claims, lines)
		if claims > 12 {
			t.Errorf("%d claims in 10 s while every claim fails, want at most 12", claims)
		}
		if lines != 1 {
			t.Errorf("%d claim error lines in 10 s, want 1", lines)
		}
	})
}

// lockedWriter serialises the writes of concurrent loggers.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
