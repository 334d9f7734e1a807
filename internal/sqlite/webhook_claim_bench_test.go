package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// BenchmarkWebhookClaim measures a delivery claim (and the release that
// puts the delivery back, so every iteration sees the same backlog) with
// 1 and 50 accounts of 20 active endpoints each, every endpoint with 10
// due deliveries: the claim walks the active endpoints, so its cost grows
// with them, never with the backlog.
//
//	go test ./internal/sqlite -run '^$' -bench WebhookClaim -benchtime 300x
func BenchmarkWebhookClaim(b *testing.B) {
	for _, accounts := range []int{1, 50} {
		b.Run(fmt.Sprintf("accounts=%d", accounts), func(b *testing.B) {
			s := newStore(b, Options{})
			ctx := context.Background()
			for range accounts {
				a := newAccount(b, s, 1<<30)
				for range locrisk.MaxActiveEndpoints {
					newEndpoint(b, s, a.ID, t0)
				}
				for i := range 10 {
					newEvent(b, s, a.ID, evCompleted, t0.Add(time.Duration(i)*time.Millisecond))
				}
			}
			now := t0.Add(time.Hour)
			for b.Loop() {
				task, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), now)
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
				if err := s.ReleaseWebhookDelivery(ctx, task); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
