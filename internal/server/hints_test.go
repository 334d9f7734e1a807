package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/view"
)

// TestErrorHints: the mistakes a new integrator makes get an answer that
// names the likely cause (docs/api.md, Errors).
func TestErrorHints(t *testing.T) {
	e := newEnv(t)
	acct := e.account(1000, 1000)
	key := e.allScopesKey(acct)
	contentType := func(v string) reqOpt { return func(r *http.Request) { r.Header.Set("Content-Type", v) } }
	tests := []struct {
		name, method, path, body string
		opts                     []reqOpt
		status                   int
		code                     string
		want, notWant            string
	}{
		{"swapped coordinates", "POST", jobsPath, `{"latitude": -74.006, "longitude": 40.7128}`, nil,
			422, "unsupported_location", "latitude and longitude look swapped: latitude 40.7128, longitude -74.006 is covered", ""},
		{"outside coverage, not swapped", "POST", jobsPath, `{"latitude": -33.87, "longitude": 151.21}`, nil,
			422, "unsupported_location", "outside the supported United States coverage", "swapped"},
		{"form-encoded body", "POST", jobsPath, `latitude=40.7&longitude=-74`, []reqOpt{contentType("application/x-www-form-urlencoded")},
			415, "unsupported_media_type", `sent as Content-Type: "application/x-www-form-urlencoded", which is not JSON; send a JSON object with Content-Type: application/json (curl -d sends a form`, ""},
		{"text body", "POST", jobsPath, `40.7,-74`, []reqOpt{contentType("text/plain; charset=utf-8")},
			415, "unsupported_media_type", `Content-Type: "text/plain; charset=utf-8"`, "curl"},
		{"JSON declared, not an object", "POST", jobsPath, `[1]`, nil,
			400, "invalid_request", "must be a JSON object", "Content-Type"},
		{"problem+json declared", "POST", jobsPath, `[1]`, []reqOpt{contentType("application/merge-patch+json")},
			400, "invalid_request", "must be a JSON object", "Content-Type"},
		{"forgotten minus on a US longitude", "POST", jobsPath, `{"latitude": 37.77, "longitude": 122.41}`, nil,
			422, "unsupported_location", "longitude 122.41 is east of Greenwich, and US longitudes are negative (west) but for Guam, " +
				"the Northern Mariana Islands and the far western Aleutians: did you mean -122.41? latitude 37.77, longitude -122.41 is covered", "swapped"},
		{"east longitude, its negation not covered either", "POST", jobsPath, `{"latitude": -33.87, "longitude": 151.21}`, nil,
			422, "unsupported_location", "outside the supported", "did you mean"},
		{"west longitude outside coverage", "POST", jobsPath, `{"latitude": -33.87, "longitude": -70.6}`, nil,
			422, "unsupported_location", "outside the supported", "did you mean"},
		{"lat and lng", "POST", jobsPath, `{"lat": 37.77, "lng": -122.41}`, nil,
			400, "invalid_latitude", `from -90 to 90; unknown fields "lat", "lng"; did you mean "latitude", "longitude"?`, ""},
		{"lng for longitude", "POST", jobsPath, `{"latitude": 37.77, "lng": -122.41}`, nil,
			400, "invalid_longitude", `from -180 to 180; unknown field "lng"; did you mean "longitude"?`, ""},
		{"aliases and other spellings", "POST", jobsPath, `{"Latitude": 1, "LONG": 2, "lattitude": 3, "y": 4}`, nil,
			400, "invalid_latitude", `unknown fields "Latitude", "LONG", "lattitude"; did you mean "latitude", "longitude", "latitude"?`, `"y"`},
		{"unknown fields beside a guess are left out", "POST", jobsPath, `{"note": "x", "lat": 37.77, "longitude": -122.41}`, nil,
			400, "invalid_latitude", `unknown field "lat"; did you mean "latitude"?`, "note"},
		{"unknown fields, no guess", "POST", jobsPath, `{"a": 1, "b": 2, "c": 3, "d": 4, "a": 5}`, nil,
			400, "invalid_latitude", `unknown fields "a", "b", "c" and 1 more; the fields are "latitude", "longitude"`, ""},
		{"escaped unknown key", "POST", jobsPath, `{"\u006c\u0061t": 1, "longitude": 2}`, nil,
			400, "invalid_latitude", `unknown field "lat"; did you mean "latitude"?`, ""},
		{"long unknown key", "POST", jobsPath, `{"` + strings.Repeat("k", 60) + `": 2}`, nil,
			400, "invalid_latitude", `unknown field "` + strings.Repeat("k", 40) + `..."; the fields are`, strings.Repeat("k", 41)},
		{"no unknown fields, no hint", "POST", jobsPath, `{"longitude": -122.41}`, nil,
			400, "invalid_latitude", "from -90 to 90", "unknown"},
		{"present but invalid, no hint", "POST", jobsPath, `{"latitude": "37.77", "lat": 37.77, "longitude": -122.41}`, nil,
			400, "invalid_latitude", "from -90 to 90", "unknown"},
		{"batch without items", "POST", batchesPath, `{"name": "q4", "Items": [{"latitude": 1, "longitude": -1}]}`, nil,
			400, "invalid_items", `unknown field "Items"; did you mean "items"?`, ""},
		{"webhook without url", "POST", webhooksPath, `{"name": "n", "URL": "https://hooks.example.com/", "events": ["report.job.failed"]}`, nil,
			400, "invalid_url", `unknown field "URL"; did you mean "url"?`, ""},
		{"malformed job id", "GET", jobsPath + "/12345", "", nil,
			404, "report_job_not_found", "jobId values are job_ followed by at least 20 letters and digits", ""},
		{"well-formed unknown job id", "GET", jobsPath + "/job_0000000000000000000000", "", nil,
			404, "report_job_not_found", "no report job with this id", "values are"},
		{"malformed batch id", "GET", batchesPath + "/42", "", nil,
			404, "batch_not_found", "batchId values are bat_", ""},
		{"plain http webhook", "POST", webhooksPath, `{"name": "local", "url": "http://127.0.0.1:9000/hook", "events": ["report.completed"]}`, nil,
			400, "invalid_url", "--webhook-allow-private", ""},
		{"private https webhook", "POST", webhooksPath, `{"name": "local", "url": "https://10.0.0.7/hook", "events": ["report.completed"]}`, nil,
			400, "invalid_url", "--webhook-allow-private", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.method, tc.path, key, tc.body, tc.opts...)
			wantError(t, rec, tc.status, tc.code)
			msg := errorMessage(t, rec.Body.Bytes())[1]
			if !strings.Contains(msg, tc.want) || (tc.notWant != "" && strings.Contains(msg, tc.notWant)) {
				t.Errorf("message %s, want it to contain %q and not %q", msg, tc.want, tc.notWant)
			}
		})
	}

	// Batch items are rejected with the same hints, and an item on Guam,
	// east of Greenwich and covered, is not questioned.
	b := e.createBatch(key, batchBody(t, nil,
		item{"externalId": "swapped", "latitude": -74.006, "longitude": 40.7128},
		validItems(1)[0],
		item{"externalId": "east", "latitude": 37.77, "longitude": 122.41},
		item{"externalId": "aliases", "lat": 37.77, "lon": -122.41},
		item{"externalId": "guam", "latitude": 13.47, "longitude": 144.75},
		item{"external_id": "x", "latitude": 37.77},
	))
	rec := e.do("GET", batchesPath+"/"+b.BatchID+"/items", key, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("batch items: %d %s", rec.Code, rec.Body)
	}
	items := decode[view.BatchItems](t, rec).Items
	want := []struct{ status, code, message string }{
		{"rejected", "unsupported_location", "look swapped: latitude 40.7128, longitude -74.006 is covered"},
		{"queued", "", ""},
		{"rejected", "unsupported_location", "did you mean -122.41? latitude 37.77, longitude -122.41 is covered"},
		{"rejected", "invalid_latitude", `unknown fields "lat", "lon"; did you mean "latitude", "longitude"?`},
		{"queued", "", ""},
		{"rejected", "invalid_longitude", `unknown field "external_id"; did you mean "externalId"?`},
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, w := range want {
		it := items[i]
		code, message := "", ""
		if it.Error != nil {
			code, message = it.Error.Code, it.Error.Message
		}
		if it.Status != w.status || code != w.code || !strings.Contains(message, w.message) {
			t.Errorf("item %d: %s %s %q, want %s %s containing %q", i+1, it.Status, code, message, w.status, w.code, w.message)
		}
	}

	// A covered east longitude is a valid job.
	if rec := e.do("POST", jobsPath, key, `{"latitude": 13.47, "longitude": 144.75}`); rec.Code != http.StatusAccepted {
		t.Errorf("Guam: %d %s", rec.Code, rec.Body)
	}
}
