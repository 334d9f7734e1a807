package webhookverify_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/locrisk/locrisk/webhookverify"
)

// A receiver checks the two headers against the raw body.
func ExampleVerify() {
	secret := "whsec_example"
	body := []byte(`{"id":"evt_1","type":"webhook.test","apiVersion":"v1","createdUtc":"2026-11-22T10:00:00Z","data":{"endpointId":"we_1"}}`)
	sent := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ts := strconv.FormatInt(sent.Unix(), 10)
	sig := webhookverify.Sign(secret, sent.Unix(), body) // what the service sends

	fmt.Println(webhookverify.Verify(secret, ts, sig, body, sent.Add(time.Second), webhookverify.DefaultTolerance))
	fmt.Println(webhookverify.Verify(secret, ts, sig, body, sent.Add(time.Hour), webhookverify.DefaultTolerance))
	// Output:
	// <nil>
	// webhookverify: timestamp outside the tolerance: timestamp is 3600s old, limit 300s
}
