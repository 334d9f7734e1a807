package webhookverify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The expected values were computed outside Go with
//
//	key=$(printf %s "${secret#whsec_}" | base64 -d | xxd -p -c 100)
//	printf '%s.%s.%s' "$id" "$ts" "$body" | openssl dgst -sha256 -mac HMAC -macopt hexkey:$key -binary | base64
func TestSignStandardVectors(t *testing.T) {
	tests := []struct {
		secret, id string
		ts         int64
		body, want string
	}{
		// A secret as the service makes them: whsec_ and 40 base62
		// characters, a 30-byte key.
		{"whsec_MfKQ9r6xYn2ZpT4sVb8wLc1dHj5kRm0qWe7uAt3g", "evt_0001TestEvent0000000001", 1700000000,
			`{"id":"evt_0001TestEvent0000000001","type":"webhook.test"}`, "v1,rMVZYB/afM2KmQlk41f9zKu65eKOCWZpg+G2mUxw++c="},
		// A padded secret ("secret-secret-secret") and an empty body.
		{"whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=", "evt_1", 1767225600, "", "v1,LUJJEH1M8T7zrVQU3Ix198tDZ4ku4dkQZKD3KRzw6BA="},
	}
	for _, tc := range tests {
		got, err := SignStandard(tc.secret, tc.id, tc.ts, []byte(tc.body))
		if err != nil || got != tc.want {
			t.Errorf("SignStandard(%q, %q, %d, %q) = %s, %v; want %s", tc.secret, tc.id, tc.ts, tc.body, got, err, tc.want)
		}
	}
}

// TestSignStandardByHand computes the signature from the specification's
// description with crypto/hmac directly and compares.
func TestSignStandardByHand(t *testing.T) {
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d") // 30 bytes
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	const id, ts = "evt_0001HandMade000000000", int64(1767225600)
	body := []byte(`{"id":"evt_0001HandMade000000000","type":"report.job.completed","data":{}}`)

	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + string(body)))
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))

	got, err := SignStandard(secret, id, ts, body)
	if err != nil || got != want {
		t.Fatalf("SignStandard = %s, %v; by hand %s", got, err, want)
	}
	// The prefix is optional, as in the specification's libraries.
	if bare, err := SignStandard(strings.TrimPrefix(secret, "whsec_"), id, ts, body); err != nil || bare != want {
		t.Errorf("SignStandard without the prefix = %s, %v; want %s", bare, err, want)
	}
	// Not the service's own scheme: that one keys with the whole string.
	if got == Sign(secret, ts, body) {
		t.Error("the two schemes give the same signature")
	}
}

func TestSignStandardRefuses(t *testing.T) {
	const good = "whsec_MfKQ9r6xYn2ZpT4sVb8wLc1dHj5kRm0qWe7uAt3g"
	for _, tc := range []struct {
		name, secret, id string
		want             error
	}{
		{"secret not base64", "whsec_x", "evt_1", ErrBadSecret},
		{"secret of URL-safe base64", "whsec_-_-_", "evt_1", ErrBadSecret},
		{"empty key", "whsec_", "evt_1", ErrBadSecret},
		{"empty id", good, "", ErrBadWebhookID},
		{"id with a new line", good, "evt_1\r\nX-Other: 1", ErrBadWebhookID},
		{"id with a space at the end", good, "evt_1 ", ErrBadWebhookID},
	} {
		if sig, err := SignStandard(tc.secret, tc.id, 1700000000, []byte("{}")); !errors.Is(err, tc.want) || sig != "" {
			t.Errorf("%s: SignStandard = %q, %v; want %v", tc.name, sig, err, tc.want)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	const secret = "whsec_MfKQ9r6xYn2ZpT4sVb8wLc1dHj5kRm0qWe7uAt3g"
	const id = "evt_0001TestEvent0000000001"
	body := []byte(`{"id":"evt_0001TestEvent0000000001","type":"webhook.test"}`)
	now := time.Unix(1700000000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	sign := func(secret, id string, ts int64, body []byte) string {
		t.Helper()
		s, err := SignStandard(secret, id, ts, body)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := sign(secret, id, now.Unix(), body)
	other := sign("whsec_"+base64.StdEncoding.EncodeToString([]byte("an older secret of 24 bytes")), id, now.Unix(), body)
	// The same 32 bytes in a spelling no sender produces: the last
	// character before the padding carries two unused bits, one set here.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b64 := good[len("v1,"):]
	nonCanonical := "v1," + b64[:42] + string(alphabet[strings.IndexByte(alphabet, b64[42])^1]) + "="
	tests := []struct {
		name                string
		secret, id, ts, sig string
		body                []byte
		now                 time.Time
		tolerance           time.Duration
		want                error
	}{
		{"valid", secret, id, ts, good, body, now, 0, nil},
		{"valid without the secret's prefix", strings.TrimPrefix(secret, "whsec_"), id, ts, good, body, now, 0, nil},
		{"valid among others", secret, id, ts, other + " v1a,c2lnbmF0dXJl v1,bm90IGEgc2lnbmF0dXJl " + good, body, now, 0, nil},
		{"valid first of two", secret, id, ts, good + " " + other, body, now, 0, nil},
		{"tab between signatures", secret, id, ts, other + "\t" + good, body, now, 0, nil},
		{"body changed", secret, id, ts, good, append(append([]byte{}, body...), ' '), now, 0, ErrSignatureMismatch},
		{"id changed", secret, "evt_0001TestEvent0000000002", ts, good, body, now, 0, ErrSignatureMismatch},
		{"timestamp changed", secret, id, strconv.FormatInt(now.Unix()+1, 10), good, body, now, 0, ErrSignatureMismatch},
		{"wrong secret", secret, id, ts, other, body, now, 0, ErrSignatureMismatch},
		{"signed with the whole secret string", secret, id, ts,
			"v1," + base64.StdEncoding.EncodeToString(hmacOf([]byte(secret), id+"."+ts+"."+string(body))), body, now, 0, ErrSignatureMismatch},
		{"legacy prefix v1=", secret, id, ts, "v1=" + b64, body, now, 0, ErrBadSignatureHeader},
		{"legacy hex value", secret, id, ts, Sign(secret, now.Unix(), body), body, now, 0, ErrBadSignatureHeader},
		{"other version only", secret, id, ts, "v2," + b64, body, now, 0, ErrBadSignatureHeader},
		{"asymmetric entry only", secret, id, ts, "v1a," + b64, body, now, 0, ErrBadSignatureHeader},
		{"no prefix", secret, id, ts, b64, body, now, 0, ErrBadSignatureHeader},
		{"unpadded", secret, id, ts, strings.TrimRight(good, "="), body, now, 0, ErrBadSignatureHeader},
		{"non-canonical base64", secret, id, ts, nonCanonical, body, now, 0, ErrBadSignatureHeader},
		{"comma-separated list", secret, id, ts, other + "," + good, body, now, 0, ErrBadSignatureHeader},
		{"no id", secret, "", ts, good, body, now, 0, ErrMissingHeaders},
		{"no timestamp", secret, id, " ", good, body, now, 0, ErrMissingHeaders},
		{"no signature", secret, id, ts, "", body, now, 0, ErrMissingHeaders},
		{"signed timestamp", secret, id, "+" + ts, good, body, now, 0, ErrBadTimestamp},
		{"milliseconds are not seconds", secret, id, ts + "000", good, body, now, 0, ErrSignatureMismatch},
		{"secret not base64", "whsec_x", id, ts, good, body, now, 0, ErrBadSecret},
		{"replayed", secret, id, ts, good, body, now.Add(DefaultTolerance + time.Second), 0, ErrTimestampOutsideTolerance},
		{"from the future", secret, id, ts, good, body, now.Add(-DefaultTolerance - time.Second), 0, ErrTimestampOutsideTolerance},
		{"at the tolerance", secret, id, ts, good, body, now.Add(DefaultTolerance), 0, nil},
		{"own tolerance", secret, id, ts, good, body, now.Add(time.Minute + time.Second), time.Minute, ErrTimestampOutsideTolerance},
		{"negative tolerance is the default", secret, id, ts, good, body, now.Add(4 * time.Minute), -1, nil},
		// A forgery is refused as a mismatch even when also stale: the
		// clock is not revealed to a sender without the secret.
		{"forged and stale", secret, id, ts, other, body, now.Add(time.Hour), 0, ErrSignatureMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyStandard(tc.secret, tc.id, tc.ts, tc.sig, tc.body, tc.now, tc.tolerance)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("VerifyStandard = %v, want %v", err, tc.want)
			}
		})
	}
}

func hmacOf(key []byte, content string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(content))
	return m.Sum(nil)
}

func TestVerifyStandardHeader(t *testing.T) {
	const secret = "whsec_MfKQ9r6xYn2ZpT4sVb8wLc1dHj5kRm0qWe7uAt3g"
	const id = "evt_0001TestEvent0000000003"
	body := []byte(`{"id":"evt_0001TestEvent0000000003"}`)
	now := time.Unix(1700000000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	good, err := SignStandard(secret, id, now.Unix(), body)
	if err != nil {
		t.Fatal(err)
	}
	zero := "v1," + base64.StdEncoding.EncodeToString(make([]byte, 32))
	// http.Header keys as a receiver's server makes them (canonical form).
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name string
		h    http.Header
		want error
	}{
		{"valid", hdr(HeaderWebhookID, id, HeaderWebhookTimestamp, ts, HeaderWebhookSignature, good), nil},
		{"with the Service-* headers beside", hdr(HeaderWebhookID, id, HeaderWebhookTimestamp, ts, HeaderWebhookSignature, good,
			HeaderTimestamp, ts, HeaderSignature, Sign(secret, now.Unix(), body)), nil},
		{"signature in a repeated header", hdr(HeaderWebhookID, id, HeaderWebhookTimestamp, ts,
			HeaderWebhookSignature, zero, HeaderWebhookSignature, good), nil},
		{"two ids", hdr(HeaderWebhookID, id, HeaderWebhookID, id, HeaderWebhookTimestamp, ts, HeaderWebhookSignature, good), ErrBadWebhookID},
		{"two timestamps", hdr(HeaderWebhookID, id, HeaderWebhookTimestamp, ts, HeaderWebhookTimestamp, ts,
			HeaderWebhookSignature, good), ErrBadTimestamp},
		{"no id", hdr(HeaderWebhookTimestamp, ts, HeaderWebhookSignature, good), ErrMissingHeaders},
		{"only the Service-* headers", hdr(HeaderTimestamp, ts, HeaderSignature, Sign(secret, now.Unix(), body)), ErrMissingHeaders},
		{"blank signatures", hdr(HeaderWebhookID, id, HeaderWebhookTimestamp, ts, HeaderWebhookSignature, " "), ErrMissingHeaders},
		{"only a wrong signature", hdr(HeaderWebhookID, id, HeaderWebhookTimestamp, ts, HeaderWebhookSignature, zero), ErrSignatureMismatch},
	}
	for _, tc := range tests {
		err := VerifyStandardHeader(secret, tc.h, body, now, DefaultTolerance)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: VerifyStandardHeader = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestStandardKey: the service's secrets (whsec_ and 40 base62
// characters) decode to 30 bytes, above the specification's minimum of
// 24; anything that is not base64 is refused.
func TestStandardKey(t *testing.T) {
	for _, tc := range []struct {
		secret string
		len    int
		err    error
	}{
		{"whsec_MfKQ9r6xYn2ZpT4sVb8wLc1dHj5kRm0qWe7uAt3g", 30, nil},
		{"MfKQ9r6xYn2ZpT4sVb8wLc1dHj5kRm0qWe7uAt3g", 30, nil},
		{"whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=", 20, nil},
		{"whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ", 0, ErrBadSecret},
		{"whsec_", 0, ErrBadSecret},
		{"whsec_a b=", 0, ErrBadSecret},
	} {
		key, err := StandardKey(tc.secret)
		if tc.err != nil && !errors.Is(err, tc.err) || tc.err == nil && (err != nil || len(key) != tc.len) {
			t.Errorf("StandardKey(%q) = %d bytes, %v; want %d, %v", tc.secret, len(key), err, tc.len, tc.err)
		}
	}
}

// Bits of FuzzVerifyStandard's mode argument.
const (
	stdAppendValid = 1 << iota // add the real signature to webhook-signature
	stdValidFirst              // ... before the fuzzed entries
	stdSigTwice                // ... as a second header line
	stdRawSecret               // use the fuzzed secret string instead of whsec_ + base64(key)
	stdSecondID                // send webhook-id twice
	stdSecondTS                // send webhook-timestamp twice
	stdNoTS                    // send no webhook-timestamp
)

// FuzzVerifyStandard feeds arbitrary secrets, ids, headers, bodies, clocks
// and tolerances to VerifyStandardHeader. It must never panic, must return
// only its documented errors, must return nil only when one entry of the
// signature header is exactly "v1," + the base64 HMAC computed here with
// crypto/hmac for the one id and timestamp header and the timestamp is
// within the tolerance, and must return nil for such a delivery built from
// the fuzz inputs.
func FuzzVerifyStandard(f *testing.F) {
	f.Add([]byte("0123456789abcdef01234567"), "", "evt_1", "1700000000", "", []byte(`{"id":"evt_1"}`),
		int64(1700000000), int64(0), uint8(stdAppendValid))
	f.Add([]byte("k"), "", "evt_1", "1700000000", "v1a,xyz v1,AAAA v1,", []byte(`{}`), int64(1700000301), int64(300),
		uint8(stdAppendValid|stdValidFirst))
	f.Add([]byte(nil), "whsec_test", "a.b", " 42 ", "v1,"+strings.Repeat("A", 43)+"=", []byte(nil), int64(42), int64(-5),
		uint8(stdAppendValid|stdRawSecret))
	f.Add([]byte("key"), "", "evt_1", "+1700000000", "v1=", []byte("x"), int64(1700000000), int64(60), uint8(stdSigTwice|stdAppendValid))
	f.Add([]byte("key"), "", "evt_1", "1700000000", "v1,ab", []byte("x"), int64(1700000000), int64(60), uint8(stdSecondID|stdAppendValid))
	f.Add([]byte("key"), "", "evt_1", "1700000000", "v1,ab", []byte("x"), int64(1700000000), int64(60), uint8(stdSecondTS|stdAppendValid))
	f.Add([]byte("key"), "c2VjcmV0", "", "999999999999999999", "garbage", []byte("x"), int64(0), int64(1), uint8(stdNoTS|stdRawSecret))
	f.Fuzz(func(t *testing.T, key []byte, rawSecret, id, tsHeader, sigHeader string, body []byte, nowUnix, tolSec int64, mode uint8) {
		if nowUnix < 0 {
			nowUnix = -(nowUnix + 1)
		}
		nowUnix %= 1 << 40
		tolSec %= 10_000_000
		now := time.Unix(nowUnix, 0)
		tol := time.Duration(tolSec) * time.Second
		limit := tolSec
		if tol <= 0 {
			limit = int64(DefaultTolerance / time.Second)
		}

		// The key as a receiver reads the secret; an unusable secret has
		// none.
		secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
		hmacKey := key
		if mode&stdRawSecret != 0 {
			secret = rawSecret
			var err error
			hmacKey, err = base64.StdEncoding.DecodeString(strings.TrimPrefix(rawSecret, "whsec_"))
			if err != nil {
				hmacKey = nil
			}
		}
		ts, tsOK := fuzzTimestamp(tsHeader)
		var expected string // the one genuine entry, "" if there is none
		if len(hmacKey) > 0 && tsOK && id != "" {
			expected = "v1," + base64.StdEncoding.EncodeToString(hmacOf(hmacKey, id+"."+strconv.FormatInt(ts, 10)+"."+string(body)))
		}

		h := http.Header{}
		h.Add(HeaderWebhookID, id)
		if mode&stdSecondID != 0 {
			h.Add(HeaderWebhookID, id)
		}
		if mode&stdNoTS == 0 {
			h.Add(HeaderWebhookTimestamp, tsHeader)
			if mode&stdSecondTS != 0 {
				h.Add(HeaderWebhookTimestamp, tsHeader)
			}
		}
		appended := mode&stdAppendValid != 0 && expected != ""
		switch {
		case appended && mode&stdSigTwice != 0:
			h.Add(HeaderWebhookSignature, sigHeader)
			h.Add(HeaderWebhookSignature, expected)
		case appended && mode&stdValidFirst != 0:
			h.Add(HeaderWebhookSignature, expected+" "+sigHeader)
		case appended:
			h.Add(HeaderWebhookSignature, sigHeader+" "+expected)
		default:
			h.Add(HeaderWebhookSignature, sigHeader)
		}

		err := VerifyStandardHeader(secret, h, body, now, tol)

		if err != nil {
			known := false
			for _, e := range []error{ErrMissingHeaders, ErrBadTimestamp, ErrBadSignatureHeader, ErrSignatureMismatch,
				ErrTimestampOutsideTolerance, ErrBadSecret, ErrBadWebhookID} {
				known = known || errors.Is(err, e)
			}
			if !known {
				t.Fatalf("undocumented error %v", err)
			}
		}

		single := len(h.Values(HeaderWebhookID)) == 1 && len(h.Values(HeaderWebhookTimestamp)) == 1
		signed := false
		if single && expected != "" {
			for _, line := range h.Values(HeaderWebhookSignature) {
				for _, entry := range strings.Fields(line) {
					signed = signed || entry == expected
				}
			}
		}
		diff := nowUnix - ts
		inTime := diff <= limit && -diff <= limit

		if err == nil && !(signed && inTime) {
			t.Fatalf("accepted: single id and timestamp %v (%q, %d), signed %v, within %ds of %d: %v",
				single, id, ts, signed, limit, nowUnix, inTime)
		}
		if signed && inTime && err != nil {
			t.Fatalf("refused a genuine delivery (id %q, ts %d, now %d, limit %ds): %v", id, ts, nowUnix, limit, err)
		}
		if signed && !inTime && !errors.Is(err, ErrTimestampOutsideTolerance) {
			t.Fatalf("genuine signature, ts %d outside %ds of %d: %v, want ErrTimestampOutsideTolerance", ts, limit, nowUnix, err)
		}
		if appended && single && !signed {
			t.Fatalf("the appended entry %q was not recognised", expected)
		}
		// What the sender makes for these inputs is exactly the entry
		// computed here.
		if expected != "" && sendableID(id) {
			if got, err := SignStandard(secret, id, ts, body); err != nil || got != expected {
				t.Fatalf("SignStandard = %q, %v; computed %q", got, err, expected)
			}
		}
	})
}
