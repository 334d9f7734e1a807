package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// UserAgent is sent with every delivery.
const UserAgent = "locrisk-webhooks/1"

// Limits on what is read back from a receiver.
const (
	readLimit    = 4 << 10  // bytes kept for the excerpt
	drainLimit   = 64 << 10 // further bytes read and dropped so the connection can be reused
	excerptLimit = 200      // bytes of excerpt returned
	errLimit     = 200      // bytes of error text returned
)

// Attempt is one delivery attempt. Body is the exact event JSON (the same on
// every attempt); DeliveryID is the wd_ id and EventID the evt_ id (the
// body's "id", sent as webhook-id), both also the same on every attempt.
type Attempt struct {
	URL, Secret, Event, DeliveryID, EventID string
	Body                                    []byte
}

// Result is the outcome of one attempt, ready to record.
type Result struct {
	// StatusCode is the HTTP status received, 0 when no response arrived.
	StatusCode int
	// Err is empty on success; otherwise a short single-line reason safe to
	// show the endpoint's owner (it names no resolved address).
	Err string
	// Excerpt is at most 200 bytes of the response body: valid UTF-8 with
	// control characters replaced by spaces.
	Excerpt string
	// Success is true for a 2xx response within the time limit.
	Success bool
	// Duration is the wall time of the attempt.
	Duration time.Duration
}

// Send makes one attempt: it signs Body with a timestamp taken from now
// (fresh on every call, so a retry is never refused as stale) by both
// schemes, POSTs it with the Service-* and the Standard Webhooks headers,
// and reports what happened. It never returns the receiver's full body.
// client should come from NewClient; ctx bounds the attempt in addition to
// the client's own timeout.
//
// An attempt that cannot be signed by both schemes (a secret that is not
// whsec_ and base64, an empty EventID: the service makes neither) fails
// without a request rather than go out with a signature missing.
func Send(ctx context.Context, client *http.Client, a Attempt, now time.Time) Result {
	start := time.Now()
	res := send(ctx, client, a, now)
	res.Duration = time.Since(start)
	return res
}

func send(ctx context.Context, client *http.Client, a Attempt, now time.Time) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(a.Body))
	if err != nil {
		return Result{Err: "invalid endpoint url"}
	}
	ts := now.Unix()
	standard, err := SignStandard(a.Secret, a.EventID, ts, a.Body)
	if err != nil {
		return Result{Err: "cannot sign the delivery: " + strings.TrimPrefix(err.Error(), "webhookverify: ")}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(a.Secret, ts, a.Body))
	req.Header.Set(HeaderEvent, a.Event)
	req.Header.Set(HeaderDelivery, a.DeliveryID)
	// The same timestamp under its Standard Webhooks name; webhook-id is
	// the event id, which receivers deduplicate on (docs/webhooks.md,
	// Standard Webhooks).
	req.Header.Set(HeaderWebhookID, a.EventID)
	req.Header.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderWebhookSignature, standard)

	resp, err := client.Do(req)
	if err != nil {
		return Result{Err: sanitizeError(err)}
	}
	defer resp.Body.Close()

	head, readErr := io.ReadAll(io.LimitReader(resp.Body, readLimit))
	if readErr == nil {
		// Best effort: a short remainder is drained so the connection can be
		// reused; a long one is cut off by Close.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	}
	res := Result{StatusCode: resp.StatusCode, Excerpt: Excerpt(head, excerptLimit)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		// The status decides; a body cut short by the time limit after a 2xx
		// arrived still means the receiver accepted the event.
		res.Success = true
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		res.Err = fmt.Sprintf("redirect not followed (status %d)", resp.StatusCode)
	default:
		res.Err = fmt.Sprintf("receiver responded with status %d", resp.StatusCode)
	}
	return res
}

// Excerpt makes a receiver's bytes safe to store and show: at most limit
// bytes, cut on a rune boundary, invalid UTF-8 replaced, control characters
// (newlines included) turned into spaces, runs of spaces collapsed and the
// ends trimmed.
func Excerpt(b []byte, limit int) string {
	var sb strings.Builder
	space := false
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == utf8.RuneError && size <= 1 {
			r = '\uFFFD'
		}
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '\u2028' || r == '\u2029' {
			space = sb.Len() > 0
			continue
		}
		n := utf8.RuneLen(r)
		extra := 0
		if space {
			extra = 1
		}
		if sb.Len()+extra+n > limit {
			break
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// sanitizeError turns a client error into a short reason for the endpoint's
// owner. Known causes get fixed wording; anything else keeps only the
// innermost message, single-line and truncated. The request URL (which the
// *url.Error would repeat) and dialled addresses are left out.
func sanitizeError(err error) string {
	var addrErr *AddressError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var netErr net.Error
	switch {
	case errors.As(err, &addrErr):
		return "destination address not allowed (" + addrErr.Class + ")"
	case errors.Is(err, ErrAddressNotAllowed):
		return "destination address not allowed"
	case errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "DNS lookup failed: host not found"
		}
		return "DNS lookup failed"
	case errors.As(err, &certErr), errors.As(err, &unknownCA),
		errors.As(err, &hostErr), errors.As(err, &invalidCert):
		return "TLS certificate verification failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by receiver"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "receiver unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by receiver before a response"
	}
	inner := err
	for {
		next := errors.Unwrap(inner)
		if next == nil {
			break
		}
		inner = next
	}
	// The innermost message of an unknown error may still quote an address
	// (an *net.AddrError, an error type added in a later Go release): the
	// owner must not learn what an internal name resolved to, so every
	// address-shaped token is masked before the text is stored and shown.
	return "request failed: " + Excerpt([]byte(redactAddresses(inner.Error())), errLimit-len("request failed: "))
}

// redactAddresses replaces every IP address in s, with or without a port or
// IPv6 brackets ("10.1.2.3", "10.1.2.3:53", "[fe80::1%eth0]:443"), by
// "[address]". It looks at maximal runs of the characters an address is
// written with, so words that merely contain hex letters are left alone.
func redactAddresses(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		if !addrChar(s[i]) {
			sb.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && addrChar(s[j]) {
			j++
		}
		// A zone ("%eth0") may hold any letters: take it into the run.
		if k := strings.IndexByte(s[i:j], '%'); k >= 0 {
			for j < len(s) && s[j] != ' ' && s[j] != ',' && s[j] != ';' && s[j] != ')' && s[j] != '"' && s[j] != '\'' {
				j++
			}
		}
		run := s[i:j]
		// Keep the sentence's own punctuation after the address.
		trimmed := strings.TrimRight(run, ".:")
		switch {
		case isAddressToken(run):
			sb.WriteString("[address]")
		case isAddressToken(trimmed):
			sb.WriteString("[address]" + run[len(trimmed):])
		default:
			sb.WriteString(run)
		}
		i = j
	}
	return sb.String()
}

func addrChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' ||
		c == '.' || c == ':' || c == '[' || c == ']' || c == '%'
}

// isAddressToken reports whether t is an address, possibly bracketed or
// with a port.
func isAddressToken(t string) bool {
	if t == "" {
		return false
	}
	if _, err := netip.ParseAddrPort(t); err == nil {
		return true
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "["), "]")
	if _, err := netip.ParseAddr(t); err == nil {
		return true
	}
	return false
}
