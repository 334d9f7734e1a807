// Package webhookverify checks the signature of a locrisk webhook delivery
// (docs/webhooks.md, Verifying a delivery). It imports nothing but the
// standard library, so a receiver in any Go module can import it and build
// nothing else of locrisk; the locrisk service signs its deliveries with Sign
// and SignStandard from this same package, so there is one implementation of
// each format.
//
// Every delivery is signed twice, with the same endpoint secret and the same
// timestamp; a receiver checks whichever scheme it likes.
//
// The service's own scheme (Sign, Verify, VerifyHeader, Middleware):
// Service-Timestamp is Unix seconds; Service-Signature is "v1=" followed by
// the lowercase hex HMAC-SHA256 of "{timestamp}.{raw body}", keyed with the
// endpoint's whole signing secret ("whsec_...", prefix included) as bytes.
// The header may carry several values separated by commas or spaces; any
// matching v1 value is enough.
//
// The Standard Webhooks scheme (SignStandard, VerifyStandard,
// VerifyStandardHeader; see standard.go): webhook-id, webhook-timestamp and
// webhook-signature, the last "v1," followed by the base64 HMAC-SHA256 of
// "{id}.{timestamp}.{raw body}" keyed with the base64-decoded secret after
// "whsec_" (docs/webhooks.md, Standard Webhooks).
package webhookverify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery (docs/webhooks.md, Delivery, success and
// retries).
const (
	HeaderTimestamp = "Service-Timestamp" // Unix seconds, the one that was signed
	HeaderSignature = "Service-Signature" // "v1=" + lowercase hex HMAC-SHA256
	HeaderEvent     = "Service-Event"     // event type, e.g. report.job.completed
	HeaderDelivery  = "Service-Delivery"  // delivery id (wd_...), the same on every attempt
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, either way.
const DefaultTolerance = 5 * time.Minute

// signatureScheme prefixes each signature value in Service-Signature.
const signatureScheme = "v1="

// Errors returned by the Verify functions of both schemes, possibly wrapped
// (test with errors.Is). Each is distinct so a receiver can log why it
// refused a delivery; all of them mean "do not trust this request".
var (
	// ErrMissingHeaders: a header of the scheme (Service-Timestamp and
	// Service-Signature; webhook-id, webhook-timestamp and
	// webhook-signature) is absent or empty.
	ErrMissingHeaders = errors.New("webhookverify: missing timestamp, signature or id header")
	// ErrBadTimestamp: the timestamp header is not a single run of decimal
	// digits, or is sent more than once.
	ErrBadTimestamp = errors.New("webhookverify: timestamp header is not one Unix time in seconds")
	// ErrBadSignatureHeader: the signature header holds no well-formed v1
	// value ("v1=" and 64 hex digits; "v1," and 44 characters of padded
	// base64 in webhook-signature).
	ErrBadSignatureHeader = errors.New("webhookverify: signature header holds no well-formed v1 value")
	// ErrSignatureMismatch: no v1 value matches the body, timestamp (and id)
	// and secret.
	ErrSignatureMismatch = errors.New("webhookverify: signature does not match")
	// ErrTimestampOutsideTolerance: the signature is right but the timestamp
	// is too old (a replay) or too far in the future.
	ErrTimestampOutsideTolerance = errors.New("webhookverify: timestamp outside the tolerance")
	// ErrBadSecret (Standard Webhooks only): the secret is not "whsec_"
	// followed by base64, so it gives no HMAC key.
	ErrBadSecret = errors.New("webhookverify: secret is not whsec_ followed by base64")
	// ErrBadWebhookID (Standard Webhooks only): webhook-id is sent more than
	// once, or (when signing) is empty or holds characters a header cannot
	// carry as they are.
	ErrBadWebhookID = errors.New("webhookverify: webhook-id is not one usable value")
)

// Sign returns the Service-Signature value for body sent at timestamp (Unix
// seconds).
func Sign(secret string, timestamp int64, body []byte) string {
	return signatureScheme + hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret string, timestamp int64, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	var ts [20]byte
	m.Write(strconv.AppendInt(ts[:0], timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks one delivery from its two header values: the signature over
// the raw body exactly as received, then the timestamp within tolerance of
// now (a tolerance <= 0 means DefaultTolerance: there is deliberately no way
// to switch the replay check off). It returns nil or one of the Err values.
//
// The signature is checked before the timestamp so that a forged request
// learns nothing about the receiver's clock.
func Verify(secret, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if strings.TrimSpace(timestamp) == "" || strings.TrimSpace(signature) == "" {
		return fmt.Errorf("%w: %s and %s are both needed", ErrMissingHeaders, HeaderTimestamp, HeaderSignature)
	}
	return verify(secret, timestamp, signature, body, now, tolerance)
}

// VerifyHeader is Verify reading the values from a request's header. A
// repeated Service-Signature header counts as one list of values; a
// repeated Service-Timestamp is ambiguous and refused (ErrBadTimestamp).
func VerifyHeader(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	tsValues := h.Values(HeaderTimestamp)
	sigValues := h.Values(HeaderSignature)
	if len(tsValues) == 0 || strings.TrimSpace(tsValues[0]) == "" ||
		len(sigValues) == 0 || strings.TrimSpace(strings.Join(sigValues, "")) == "" {
		return fmt.Errorf("%w: %s and %s are both needed", ErrMissingHeaders, HeaderTimestamp, HeaderSignature)
	}
	if len(tsValues) > 1 {
		return fmt.Errorf("%w: header sent %d times", ErrBadTimestamp, len(tsValues))
	}
	return verify(secret, tsValues[0], strings.Join(sigValues, ","), body, now, tolerance)
}

func verify(secret, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, err := parseTimestamp(strings.TrimSpace(timestamp))
	if err != nil {
		return err
	}
	want := mac(secret, ts, body)
	wellFormed := 0
	for _, sig := range strings.FieldsFunc(signature, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		hexSig, ok := strings.CutPrefix(sig, signatureScheme)
		if !ok || len(hexSig) != 2*sha256.Size {
			continue
		}
		got, err := hex.DecodeString(hexSig)
		if err != nil {
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

func parseTimestamp(s string) (int64, error) {
	// Digits only: ParseInt would also take "+1700000000" and "-5".
	if s == "" || len(s) > 18 {
		return 0, ErrBadTimestamp
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, ErrBadTimestamp
		}
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, ErrBadTimestamp
	}
	return ts, nil
}

func checkTolerance(ts int64, now time.Time, tolerance time.Duration) error {
	// time.Time.Sub saturates instead of overflowing, whatever the clock.
	diff := now.Sub(time.Unix(ts, 0))
	limit := int64(tolerance / time.Second)
	switch {
	case diff > tolerance:
		return fmt.Errorf("%w: timestamp is %ds old, limit %ds", ErrTimestampOutsideTolerance, int64(diff/time.Second), limit)
	case diff < -tolerance:
		return fmt.Errorf("%w: timestamp is %ds in the future, limit %ds", ErrTimestampOutsideTolerance, int64(-diff/time.Second), limit)
	}
	return nil
}

// MaxBody is the largest body Middleware reads. The service's events are a
// few KiB; the limit keeps a hostile sender from exhausting a receiver's
// memory.
const MaxBody = 1 << 20

// Middleware wraps a receiver's handler: it reads the body (up to MaxBody),
// verifies it against secret at the current time with DefaultTolerance,
// answers 400 for a body that cannot be read or is too large and 401 for a
// failed verification, and otherwise calls next with the body restored for
// reading.
func Middleware(secret string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			http.Error(w, "unreadable or oversized body", http.StatusBadRequest)
			return
		}
		if err := VerifyHeader(secret, r.Header, body, time.Now(), DefaultTolerance); err != nil {
			http.Error(w, "invalid webhook signature", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
