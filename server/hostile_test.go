package server

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
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
