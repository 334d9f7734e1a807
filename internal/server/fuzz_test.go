package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/view"
)

// fuzzWant is what a create-job body should give, decided with
// encoding/json's generic decoder rather than the server's code path.
type fuzzWant struct {
	ok       bool
	lat, lon float64
	status   int
	code     string
}

func fuzzExpect(body []byte) fuzzWant {
	if len(body) > maxBodyBytes {
		return fuzzWant{status: http.StatusRequestEntityTooLarge, code: codePayloadTooLarge}
	}
	bad := fuzzWant{status: http.StatusBadRequest, code: codeInvalidRequest}
	if !json.Valid(body) {
		return bad
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return bad
	}
	if err := dec.Decode(new(any)); err != io.EOF {
		return bad // a second value: json.Valid would have refused it already
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return bad
	}
	num := func(key string, bound float64) (float64, bool) {
		n, isNum := obj[key].(json.Number)
		if !isNum {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil && f >= -bound && f <= bound
	}
	lat, ok := num("latitude", 90)
	if !ok {
		return fuzzWant{status: http.StatusBadRequest, code: codeInvalidLatitude}
	}
	lon, ok := num("longitude", 180)
	if !ok {
		return fuzzWant{status: http.StatusBadRequest, code: codeInvalidLongitude}
	}
	return fuzzWant{ok: true, lat: lat, lon: lon}
}

var coordinateSeeds = []string{
	`{"latitude":37.77,"longitude":-122.42}`,
	` {"longitude": -100, "latitude": 40, "extra": [1, {"a": null}]} `,
	`{"latitude":-0,"longitude":-0.0}`,
	`{"latitude":90,"longitude":-180}`,
	`{"latitude":90.0000000000000001,"longitude":180.0000000000001}`,
	`{"latitude":1e400,"longitude":0}`,
	`{"latitude":"40","longitude":-100}`,
	`{"latitude":40,"longitude":null}`,
	`{"latitude":40,"latitude":-91,"longitude":0}`,
	`{"l\u0061titude":40,"longitude":-100}`,
	`{"Latitude":40,"longitude":-100}`,
	`{"latitude":40,"longitude":-100}{}`,
	`{"latitude":40,"longitude":-100`,
	`[{"latitude":40,"longitude":-100}]`,
	`null`,
	``,
	"\ufeff{\"latitude\":40,\"longitude\":-100}",
	`{"latitude":12.5,"longitude":-100}`,
	`{"latitude":4e1,"longitude":-1E2}`,
	`{"latitude":0x10,"longitude":-100}`,
	`{"latitude":+40,"longitude":-100}`,
}

// FuzzDecodeCoordinates drives decodeCoordinates, the body decoder of
// POST /location-risk/report-jobs, with arbitrary bodies: it must never
// panic, must refuse with a code whose status is 400 or 413, and must
// accept exactly the bodies that are one JSON object with numeric latitude
// in [-90, 90] and longitude in [-180, 180], returning those numbers (zero
// without a sign).
func FuzzDecodeCoordinates(f *testing.F) {
	for _, s := range coordinateSeeds {
		f.Add([]byte(s))
	}
	check := func(t testing.TB, body []byte) {
		r := httptest.NewRequest("POST", jobsPath, bytes.NewReader(body))
		lat, lon, err := decodeCoordinates(httptest.NewRecorder(), r)
		want := fuzzExpect(body)
		if want.ok {
			if err != nil {
				t.Fatalf("refused %q: %v", body, err)
			}
			if lat != want.lat || lon != want.lon || math.Signbit(lat) && lat == 0 || math.Signbit(lon) && lon == 0 {
				t.Fatalf("decoded %q as %v, %v; want %v, %v", body, lat, lon, want.lat, want.lon)
			}
			return
		}
		var ae *Error
		if !errors.As(err, &ae) {
			t.Fatalf("accepted %q (%v, %v) or refused it without an *Error: %v; want %s", body, lat, lon, err, want.code)
		}
		if ae.Code != want.code || codeStatus[ae.Code] != want.status || ae.Message == "" {
			t.Fatalf("refused %q with %s (%d) %q; want %s (%d)", body, ae.Code, codeStatus[ae.Code], ae.Message, want.code, want.status)
		}
	}
	// Oversized bodies are checked once here rather than seeded: the
	// mutator would spend its time copying a megabyte.
	check(f, []byte(`{"latitude":40,"longitude":-100,"pad":"`+strings.Repeat("x", maxBodyBytes)+`"}`))
	obj := `{"latitude":40,"longitude":-100}`
	check(f, []byte(obj+strings.Repeat(" ", maxBodyBytes-len(obj))))
	f.Fuzz(func(t *testing.T, body []byte) { check(t, body) })
}

// FuzzCreateJobBody posts arbitrary bodies to POST /location-risk/report-jobs
// through the whole handler (auth, rate limit, decoder, coverage, store).
// The status must be 202 (a queued job at the posted coordinates), 400, 413
// or 422 (the error shape with the expected code), as decided independently
// from the body.
// The fake locator covers latitude > 0 and longitude < 0.
func FuzzCreateJobBody(f *testing.F) {
	for _, s := range coordinateSeeds {
		f.Add(s)
	}
	e := newEnv(f)
	key := e.allScopesKey(e.account(1<<30, 1<<30))
	f.Fuzz(func(t *testing.T, body string) {
		want := fuzzExpect([]byte(body))
		if want.ok && (want.lat == latLocatorFails || want.lat == latPanics) {
			t.Skip("coordinate reserved by the fake locator for failure tests")
		}
		e.t = t
		rec := e.do("POST", jobsPath, key, body)
		switch {
		case !want.ok:
			wantError(t, rec, want.status, want.code)
		case want.lat > 0 && want.lat < 90 && want.lon < 0 && want.lon > -180:
			if rec.Code != http.StatusAccepted {
				t.Fatalf("body %q: status %d, want 202; %s", body, rec.Code, rec.Body)
			}
			v := decode[view.Job](t, rec)
			if v.Latitude != want.lat || v.Longitude != want.lon || v.Status != "queued" || rec.Header().Get("Location") != v.StatusURL {
				t.Fatalf("body %q: job %+v, Location %q; want a queued job at %v, %v", body, v, rec.Header().Get("Location"), want.lat, want.lon)
			}
		default:
			wantError(t, rec, http.StatusUnprocessableEntity, codeUnsupportedLocation)
		}
		if t.Failed() {
			t.FailNow()
		}
	})
}
