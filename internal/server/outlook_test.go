package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/locrisk/locrisk/internal/risk"
)

// TestReportOutlook: a report made by the real engine (on the fixtures)
// carries the outlook through the API (docs/api.md, Read a report): the
// brief one in the summary, the whole one in the full report, both null
// with outlookUnavailable where the table has no row for the county; a
// report stored before the outlook existed is served without it. Every
// response is validated against the OpenAPI document; the document is
// shown to refuse an outlook null without its reason and a reason beside
// an outlook.
func TestReportOutlook(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	ctx := context.Background()
	eng, err := risk.Load(ctx, os.DirFS(fixtureData), nil, &savedReferences{ReferenceCache: e.st})
	if err != nil {
		t.Fatalf("loading the fixture engine: %v", err)
	}
	assess := func(lat, lon float64) *risk.Assessment {
		a, err := eng.Assess(ctx, lat, lon)
		if err != nil {
			t.Fatalf("assess %v,%v: %v", lat, lon, err)
		}
		return a
	}
	type doc struct {
		Summary map[string]json.RawMessage  `json:"summary"`
		Report  *map[string]json.RawMessage `json:"report"`
	}
	get := func(id, detail string) (doc, *httptest.ResponseRecorder) {
		t.Helper()
		rec := e.do("GET", reportsPath+id+"?detail="+detail, key, "")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d %s", detail, rec.Code, rec.Body)
		}
		var d doc
		if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		return d, rec
	}

	// San Francisco: the fixture table has its county.
	sf := e.completeWith(e.createJob(key, 37.77, -122.42).JobID, assess)
	d, _ := get(sf, "summary")
	var brief risk.OutlookBrief
	if err := json.Unmarshal(d.Summary["outlook"], &brief); err != nil || brief.Scenario != "lateCenturyHigherWarming" || brief.Resolution != "county" {
		t.Errorf("summary outlook %s (%v)", d.Summary["outlook"], err)
	}
	if _, ok := d.Summary["outlookUnavailable"]; ok || d.Report != nil {
		t.Errorf("summary: outlookUnavailable beside an outlook, or a report: %v", d.Summary)
	}
	d, _ = get(sf, "full")
	var full risk.Outlook
	if err := json.Unmarshal((*d.Report)["outlook"], &full); err != nil || full.CountyFIPS != "06075" || full.Hazards.Wildfire.Scenarios == nil {
		t.Errorf("report outlook %s (%v)", (*d.Report)["outlook"], err)
	}
	if !bytes.Equal(d.Summary["outlook"], mustJSON(t, brief)) {
		t.Errorf("the full document's summary outlook %s differs from the summary's", d.Summary["outlook"])
	}

	// Miami: no row in the fixture table, so null with the reason.
	miami := e.completeWith(e.createJob(key, 25.76, -80.19).JobID, assess)
	d, rec := get(miami, "full")
	for name, m := range map[string]map[string]json.RawMessage{"summary": d.Summary, "report": *d.Report} {
		if string(m["outlook"]) != "null" || !bytes.Contains(m["outlookUnavailable"], []byte(`"code":"county_not_in_data"`)) {
			t.Errorf("%s: outlook %s, unavailable %s", name, m["outlook"], m["outlookUnavailable"])
		}
	}
	// The document refuses an outlook null without its reason, and a
	// reason beside an outlook.
	body := rec.Body.Bytes()
	unavailable := []byte(`,"outlookUnavailable":` + string(d.Summary["outlookUnavailable"]))
	for _, tc := range []struct {
		name  string
		body  []byte
		fails bool
	}{
		{"as served", body, false},
		{"null without a reason", bytes.Replace(body, unavailable, nil, 1), true},
		{"a reason beside an outlook", bytes.Replace(body, []byte(`"outlook":null`), append([]byte(`"outlook":`), mustJSON(t, brief)...), 1), true},
		{"a missing multiplier as text", bytes.Replace(body, []byte(`"outlook":null`+string(unavailable)), append([]byte(`"outlook":`), bytes.Replace(mustJSON(t, brief), []byte(`"drought":`), []byte(`"drought":"none","x":`), 1)...), 1), true},
	} {
		r := &recordingTB{TB: t}
		v := &env{t: r}
		req := httptest.NewRequest("GET", reportsPath+miami+"?detail=full", nil)
		v.validateResponse(req, 200, rec.Header(), tc.body)
		if r.failed != tc.fails {
			t.Errorf("%s: validation failed = %v, want %v; %s", tc.name, r.failed, tc.fails, r.msgs)
		}
	}

	// A report stored before the outlook existed has none.
	old := e.completeWith(e.createJob(key, 40.0, -75.0).JobID, func(lat, lon float64) *risk.Assessment {
		a := sampleAssessment(lat, lon)
		return &a
	})
	d, rec = get(old, "full")
	for name, m := range map[string]map[string]json.RawMessage{"summary": d.Summary, "report": *d.Report} {
		if _, ok := m["outlook"]; ok {
			t.Errorf("%s of a report made before the outlook: outlook %s", name, m["outlook"])
		}
	}
	if bytes.Contains(rec.Body.Bytes(), []byte("outlook")) {
		t.Errorf("an old report served with an outlook: %.300s", rec.Body)
	}
}
