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

// A receiver checks the three Standard Webhooks headers against the raw
// body; the key is the base64 after whsec_.
func ExampleVerifyStandard() {
	// An endpoint's signing secret, as POST /api/v1/webhooks returned it.
	secret := "whsec_MfKQ9r6xYn2ZpT4sVb8wLc1dHj5kRm0qWe7uAt3g"
	body := []byte(`{"id":"evt_0001TestEvent0000000001","type":"webhook.test"}`)
	sent := time.Unix(1700000000, 0)

	// The three headers of the delivery.
	id, ts := "evt_0001TestEvent0000000001", strconv.FormatInt(sent.Unix(), 10)
	sig, _ := webhookverify.SignStandard(secret, id, sent.Unix(), body) // what the service sends
	fmt.Println(sig)

	fmt.Println(webhookverify.VerifyStandard(secret, id, ts, sig, body, sent.Add(time.Second), webhookverify.DefaultTolerance))
	fmt.Println(webhookverify.VerifyStandard(secret, id, ts, sig, append(body, ' '), sent.Add(time.Second), webhookverify.DefaultTolerance))
	// Output:
	// v1,rMVZYB/afM2KmQlk41f9zKu65eKOCWZpg+G2mUxw++c=
	// <nil>
	// webhookverify: signature does not match
}
