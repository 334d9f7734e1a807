package webhook

import (
	"net/http"
	"time"

	"github.com/locrisk/locrisk/webhookverify"
)

// Signing and verifying are package webhookverify's (docs/webhooks.md,
// Verifying a delivery): standard library only, outside internal/, so that
// receivers in other modules import it. The service signs through it too, so
// the format has one implementation; this file keeps the names the rest of
// the service uses.

// Header names of a delivery (docs/api.md, Webhooks).
const (
	HeaderTimestamp = webhookverify.HeaderTimestamp
	HeaderSignature = webhookverify.HeaderSignature
	HeaderEvent     = webhookverify.HeaderEvent
	HeaderDelivery  = webhookverify.HeaderDelivery

	// The Standard Webhooks headers (docs/webhooks.md, Standard Webhooks).
	HeaderWebhookID        = webhookverify.HeaderWebhookID
	HeaderWebhookTimestamp = webhookverify.HeaderWebhookTimestamp
	HeaderWebhookSignature = webhookverify.HeaderWebhookSignature
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, either way (docs/api.md, Webhooks).
const DefaultTolerance = webhookverify.DefaultTolerance

// Errors returned by Verify: the webhookverify values themselves, so
// errors.Is matches either name.
var (
	ErrMissingHeaders            = webhookverify.ErrMissingHeaders
	ErrBadTimestamp              = webhookverify.ErrBadTimestamp
	ErrBadSignatureHeader        = webhookverify.ErrBadSignatureHeader
	ErrSignatureMismatch         = webhookverify.ErrSignatureMismatch
	ErrTimestampOutsideTolerance = webhookverify.ErrTimestampOutsideTolerance
	ErrBadSecret                 = webhookverify.ErrBadSecret
	ErrBadWebhookID              = webhookverify.ErrBadWebhookID
)

// Sign returns the Service-Signature value for body sent at timestamp (Unix
// seconds): "v1=" + lowercase hex HMAC-SHA256 over "{timestamp}.{body}",
// keyed with the whole secret string, prefix included.
func Sign(secret string, timestamp int64, body []byte) string {
	return webhookverify.Sign(secret, timestamp, body)
}

// Verify checks a delivery as a receiver should: the signature over the raw
// body exactly as received, then the timestamp within DefaultTolerance of
// now. It returns nil or one of the Err* values above (possibly wrapped; test
// with errors.Is).
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	return webhookverify.VerifyHeader(secret, h, body, now, DefaultTolerance)
}

// SignStandard returns the webhook-signature value for the event id and
// body sent at timestamp: "v1," + base64 HMAC-SHA256 over
// "{id}.{timestamp}.{body}", keyed with the secret's base64 after "whsec_".
func SignStandard(secret, id string, timestamp int64, body []byte) (string, error) {
	return webhookverify.SignStandard(secret, id, timestamp, body)
}

// VerifyStandard checks a delivery's Standard Webhooks headers as a receiver
// should, with Verify's rules and tolerance.
func VerifyStandard(secret string, h http.Header, body []byte, now time.Time) error {
	return webhookverify.VerifyStandardHeader(secret, h, body, now, DefaultTolerance)
}
