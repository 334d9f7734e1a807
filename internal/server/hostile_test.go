package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hostile request bodies: each is just under the 1 MiB body limit and is
// shaped to make a decoder allocate as much as it can (docs/api.md, Limits
// and defaults).

// manyKeysBody is an object of about 90,000 short unknown members followed
// by a valid coordinate.
func manyKeysBody() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; b.Len() < maxBodyBytes-64; i++ {
		b.WriteString(`"k` + strconv.Itoa(i) + `":0,`)
	}
	b.WriteString(`"latitude":40,"longitude":-74}`)
	return b.Bytes()
}

// hugeArrayBody has one unknown member holding an array of about 500,000
// numbers.
func hugeArrayBody() []byte {
	var b bytes.Buffer
	b.WriteString(`{"latitude":40,"longitude":-74,"x":[0`)
	for b.Len() < maxBodyBytes-4 {
		b.WriteString(",0")
	}
	b.WriteString("]}")
	return b.Bytes()
}

// deepBody nests arrays as deep as encoding/json allows (10,000 levels).
func deepBody() []byte {
	const depth = 9990
	return []byte(`{"latitude":40,"longitude":-74,"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}")
}

// hostileBatchBody is a batch whose items array holds about 90,000 empty
// objects (far beyond the 100-item limit).
func hostileBatchBody() []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[{}`)
	for b.Len() < maxBodyBytes-4 {
		b.WriteString(",{}")
	}
	b.WriteString("]}")
	return b.Bytes()
}

// BenchmarkDecodeHostile decodes each hostile body the way the handlers
// do; compare allocs/op and B/op before and after a decoder change.
func BenchmarkDecodeHostile(b *testing.B) {
	cases := []struct {
		name   string
		body   []byte
		decode func([]byte) error
	}{
		{"job-90k-keys", manyKeysBody(), decodeJobBody},
		{"job-huge-array", hugeArrayBody(), decodeJobBody},
		{"job-deep", deepBody(), decodeJobBody},
		{"batch-90k-items", hostileBatchBody(), decodeBatchBody},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if err := c.decode(c.body); err != nil && c.name != "batch-90k-items" {
					b.Fatal(err)
				}
			}
		})
	}
}

func decodeJobBody(body []byte) error {
	r := httptest.NewRequest("POST", jobsPath, bytes.NewReader(body))
	_, _, err := decodeCoordinates(httptest.NewRecorder(), r)
	return err
}

func decodeBatchBody(body []byte) error {
	r := httptest.NewRequest("POST", batchesPath, bytes.NewReader(body))
	_, err := decodeBatch(httptest.NewRecorder(), r)
	return err
}

// TestPickFieldsMatchesMap checks the in-place member walk against what
// the old decoder gave, a map[string]json.RawMessage: last duplicate wins,
// escaped keys are unescaped, names are case-sensitive, nested members are
// not members.
func TestPickFieldsMatchesMap(t *testing.T) {
	bodies := []string{
		`{}`,
		`{"latitude":1,"longitude":2}`,
		` { "latitude" : 1 , "longitude" : [ 2 , { "latitude" : 3 } ] } `,
		`{"latitude":1,"latitude":"x"}`,
		`{"l\u0061titude":5,"Latitude":6}`,
		`{"a":{"latitude":1},"b":"latitude","latitude":null}`,
		`{"x":"\"}latitude","latitude":-0.5e3}`,
		`{"k\\":1,"latitude":true,"longitude":false}`,
	}
	for _, body := range bodies {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var lat, lon json.RawMessage
		pickFields(json.RawMessage(strings.TrimSpace(body)), field{"latitude", &lat}, field{"longitude", &lon})
		for name, got := range map[string]json.RawMessage{"latitude": lat, "longitude": lon} {
			w, ok := want[name]
			if !ok && got != nil || ok && string(bytes.TrimSpace(w)) != string(got) {
				t.Errorf("%s: %s = %q, want %q (present %v)", body, name, got, w, ok)
			}
		}
	}
}

// heapObjectBytes is the heap taken by objects, live or not yet swept.
// runtime/metrics reads it without stopping the world.
func heapObjectBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestHostileBodiesConcurrently posts the hostile bodies concurrently
// through the whole handler while a reader keeps reading, and checks that
// the heap stays under hostileHeapPerRequest per request in flight (the
// old map decoder needed 8-47 MB per body) and that every read is served.
// The normal suite sends 64; LOCRISK_LOAD=1 sends 400, past the default
// bound on requests in flight, so some are answered 503 server_busy
// (docs/operations.md, Limits and defaults).
func TestHostileBodiesConcurrently(t *testing.T) {
	const hostileHeapPerRequest = 2 << 20
	n := 64
	if os.Getenv("LOCRISK_LOAD") == "1" {
		n = 400
	}
	e := newEnv(t)
	key := e.allScopesKey(e.account(1_000_000, 1_000_000))
	bodies := []struct {
		path string
		body []byte
	}{
		{jobsPath, manyKeysBody()},
		{jobsPath, hugeArrayBody()},
		{jobsPath, deepBody()},
		{batchesPath, hostileBatchBody()},
	}

	runtime.GC()
	base := heapObjectBytes()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if h := heapObjectBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	// The reader: GETs beside the flood must all be answered 200.
	readerDone := make(chan struct{})
	var reads, badReads atomic.Int64
	var readTimes []time.Duration // only the reader appends; read after readerDone
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := httptest.NewRequest("GET", jobsPath+"?limit=1", nil)
			r.Header.Set("Authorization", "Bearer "+key)
			rec := httptest.NewRecorder()
			began := time.Now()
			e.checkedLater(e.h).ServeHTTP(rec, r)
			readTimes = append(readTimes, time.Since(began))
			reads.Add(1)
			if rec.Code != http.StatusOK {
				badReads.Add(1)
				t.Errorf("read beside the flood: %d %s", rec.Code, rec.Body)
			}
		}
	}()

	var wg sync.WaitGroup
	statuses := make([]int, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := bodies[i%len(bodies)]
			r := httptest.NewRequest("POST", b.path, bytes.NewReader(b.body))
			r.Header.Set("Authorization", "Bearer "+key)
			rec := httptest.NewRecorder()
			<-start
			e.checkedLater(e.h).ServeHTTP(rec, r)
			statuses[i] = rec.Code
		}()
	}
	close(start)
	wg.Wait()
	close(stop)
	<-sampled
	<-readerDone

	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	for s := range counts {
		switch s {
		case http.StatusAccepted, http.StatusBadRequest, http.StatusServiceUnavailable,
			http.StatusTooManyRequests: // past the account's share of requests in flight
		default:
			t.Errorf("hostile POST answered %d; want 202, 400, 429 or 503", s)
		}
	}
	grew := int64(peak.Load()) - int64(base)
	ceiling := int64(min(n, DefaultMaxInFlight/2)) * hostileHeapPerRequest
	// Reported, not asserted: timings on a shared machine are noise.
	slices.Sort(readTimes)
	var p99 time.Duration
	if len(readTimes) > 0 {
		p99 = readTimes[len(readTimes)*99/100]
	}
	t.Logf("%d hostile POSTs: statuses %v; heap grew by at most %d MiB (ceiling %d MiB); %d reads beside them, p99 %v",
		n, counts, grew>>20, ceiling>>20, reads.Load(), p99.Round(time.Microsecond))
	if grew > ceiling {
		t.Errorf("heap grew by %d MiB under %d hostile bodies; ceiling %d MiB", grew>>20, n, ceiling>>20)
	}
	if reads.Load() == 0 || badReads.Load() > 0 {
		t.Errorf("%d of %d reads beside the flood failed", badReads.Load(), reads.Load())
	}
}
