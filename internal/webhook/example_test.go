package webhook_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/locrisk/locrisk/internal/webhook"
)

// A receiver verifies each delivery against the raw body, before parsing it,
// with the signing secret it was given when the endpoint was created.
func ExampleVerify() {
	const secret = "whsec_example"
	body := `{"id":"evt_1","type":"report.job.completed","apiVersion":"v1","createdUtc":"2026-11-22T10:00:00Z","data":{"job":{"id":"job_1"}}}`
	sentAt := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)

	// What the service sends (built here with Sign to keep the example
	// self-contained).
	req := httptest.NewRequest(http.MethodPost, "/locrisk-hook", strings.NewReader(body))
	req.Header.Set(webhook.HeaderTimestamp, fmt.Sprint(sentAt.Unix()))
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(secret, sentAt.Unix(), []byte(body)))
	req.Header.Set(webhook.HeaderEvent, webhook.EventJobCompleted)
	req.Header.Set(webhook.HeaderDelivery, "wd_example")

	// What the receiver does. A real handler passes time.Now() and reads
	// r.Body with a size limit (or wraps itself in webhook.Middleware).
	now := sentAt.Add(2 * time.Second)
	raw := []byte(body)
	if err := webhook.Verify(secret, req.Header, raw, now); err != nil {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println("verified", req.Header.Get(webhook.HeaderEvent), req.Header.Get(webhook.HeaderDelivery))

	// The same delivery replayed ten minutes later is refused.
	err := webhook.Verify(secret, req.Header, raw, sentAt.Add(10*time.Minute))
	fmt.Println("replay:", err)

	// Output:
	// verified report.job.completed wd_example
	// replay: webhookverify: timestamp outside the tolerance: timestamp is 600s old, limit 300s
}
