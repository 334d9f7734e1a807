package webhookverify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks scheme (docs/webhooks.md, Standard Webhooks). Every
// delivery carries it beside the Service-* headers, so a receiver may check
// either; the Standard Webhooks project publishes verifiers for many
// languages that take these three headers and the endpoint's whsec_ secret
// as they are.
//
//   - webhook-id is the event id (evt_...): the same on every attempt and
//     every redelivery of the event, and the same at every endpoint the
//     event goes to (the specification's message id, the receiver's key for
//     dropping repeats). Service-Delivery, by contrast, names one event at
//     one endpoint.
//   - webhook-timestamp is the Unix seconds of the attempt, the same value
//     as Service-Timestamp.
//   - webhook-signature is "v1," followed by the standard, padded base64 of
//     the HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}". The
//     key is the secret's part after "whsec_", base64-decoded (the legacy
//     scheme keys with the whole string instead). The header is a
//     space-separated list; entries of other versions ("v1a,...") are
//     skipped and any matching v1 entry is enough.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// secretPrefix marks a Standard Webhooks symmetric secret; the rest is the
// key in base64.
const secretPrefix = "whsec_"

// standardScheme prefixes each signature in webhook-signature.
const standardScheme = "v1,"

// StandardKey returns the HMAC key of a signing secret under the Standard
// Webhooks scheme: the base64 (standard alphabet) after the "whsec_" prefix,
// decoded. A secret without the prefix is taken as the base64 alone, as the
// specification's libraries do. The service's secrets are "whsec_" and 40
// base62 characters, which decode to a 30-byte key. It returns
// ErrBadSecret when the rest is not base64 or decodes to no bytes.
func StandardKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSecret, err)
	}
	if len(key) == 0 {
		return nil, ErrBadSecret
	}
	return key, nil
}

// SignStandard returns the webhook-signature value for the message id (the
// event id) and body sent at timestamp (Unix seconds): "v1," and the padded
// base64 HMAC-SHA256. It returns ErrBadSecret for a secret StandardKey
// refuses and ErrBadWebhookID for an id no header can carry as it is
// (empty, with white space at either end, or with a control character).
func SignStandard(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := StandardKey(secret)
	if err != nil {
		return "", err
	}
	if !sendableID(id) {
		return "", ErrBadWebhookID
	}
	return standardScheme + base64.StdEncoding.EncodeToString(standardMAC(key, id, timestamp, body)), nil
}

func sendableID(id string) bool {
	if id == "" || strings.TrimSpace(id) != id {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] == 0x7f {
			return false
		}
	}
	return true
}

func standardMAC(key []byte, id string, timestamp int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	var ts [22]byte
	b := append(ts[:0], '.')
	b = strconv.AppendInt(b, timestamp, 10)
	m.Write(append(b, '.'))
	m.Write(body)
	return m.Sum(nil)
}

// VerifyStandard checks one delivery by the Standard Webhooks scheme from
// its three header values, with Verify's rules: the signature over the raw
// body exactly as received first, then the timestamp within tolerance of
// now (a tolerance <= 0 means DefaultTolerance). It returns nil, one of
// Verify's Err values, or ErrBadSecret when secret is not a Standard
// Webhooks secret.
func VerifyStandard(secret, id, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if id == "" || strings.TrimSpace(timestamp) == "" || strings.TrimSpace(signature) == "" {
		return fmt.Errorf("%w: %s, %s and %s are all needed", ErrMissingHeaders, HeaderWebhookID, HeaderWebhookTimestamp, HeaderWebhookSignature)
	}
	return verifyStandard(secret, id, timestamp, signature, body, now, tolerance)
}

// VerifyStandardHeader is VerifyStandard reading the values from a request's
// header. A repeated webhook-signature header counts as one list; a repeated
// webhook-id (ErrBadWebhookID) or webhook-timestamp (ErrBadTimestamp) is
// ambiguous and refused.
func VerifyStandardHeader(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	idValues := h.Values(HeaderWebhookID)
	tsValues := h.Values(HeaderWebhookTimestamp)
	sigValues := h.Values(HeaderWebhookSignature)
	if len(idValues) == 0 || idValues[0] == "" ||
		len(tsValues) == 0 || strings.TrimSpace(tsValues[0]) == "" ||
		len(sigValues) == 0 || strings.TrimSpace(strings.Join(sigValues, "")) == "" {
		return fmt.Errorf("%w: %s, %s and %s are all needed", ErrMissingHeaders, HeaderWebhookID, HeaderWebhookTimestamp, HeaderWebhookSignature)
	}
	if len(idValues) > 1 {
		return fmt.Errorf("%w: header sent %d times", ErrBadWebhookID, len(idValues))
	}
	if len(tsValues) > 1 {
		return fmt.Errorf("%w: %s sent %d times", ErrBadTimestamp, HeaderWebhookTimestamp, len(tsValues))
	}
	return verifyStandard(secret, idValues[0], tsValues[0], strings.Join(sigValues, " "), body, now, tolerance)
}

func verifyStandard(secret, id, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	key, err := StandardKey(secret)
	if err != nil {
		return err
	}
	ts, err := parseTimestamp(strings.TrimSpace(timestamp))
	if err != nil {
		return err
	}
	want := standardMAC(key, id, ts, body)
	wellFormed := 0
	for _, entry := range strings.Fields(signature) {
		got, ok := parseStandardSignature(entry)
		if !ok {
			continue
		}
		wellFormed++
		if hmac.Equal(got, want) {
			return checkTolerance(ts, now, tolerance)
		}
	}
	if wellFormed == 0 {
		return ErrBadSignatureHeader
	}
	return ErrSignatureMismatch
}

// parseStandardSignature reads one entry of webhook-signature: "v1," and the
// canonical padded base64 of 32 bytes (no other spelling of the same bytes,
// so that what is accepted is exactly what a sender can produce).
func parseStandardSignature(entry string) ([]byte, bool) {
	b64, ok := strings.CutPrefix(entry, standardScheme)
	if !ok || len(b64) != base64.StdEncoding.EncodedLen(sha256.Size) {
		return nil, false
	}
	got, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(got) != sha256.Size || base64.StdEncoding.EncodeToString(got) != b64 {
		return nil, false
	}
	return got, true
}
