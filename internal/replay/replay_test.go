package replay

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/reportverify"
)

// keySigner signs with one fixed key, as internal/signing does with the
// store's current key.
type keySigner struct{ priv ed25519.PrivateKey }

func (k keySigner) Sign(_ context.Context, doc []byte) ([]byte, error) {
	return reportverify.Sign(doc, "lrs-test", k.priv)
}

func (k keySigner) SignPDF(_ context.Context, pdf []byte) ([]byte, error) {
	return reportverify.SignPDF(pdf, "lrs-test", k.priv)
}

func newSigner() keySigner {
	return keySigner{priv: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))}
}

// served is the signed document the API serves for a report the service
// made of a at detail.
func served(t testing.TB, a *risk.Assessment, detail string, generated time.Time) []byte {
	t.Helper()
	rep, err := jobs.ReportOf(a)
	if err != nil {
		t.Fatal(err)
	}
	rep.ID, rep.JobID, rep.GeneratedUTC = ids.NewReportID(), "job_0VcFX9n40uv9EKYxhiv3yOlt", generated
	doc, err := view.SignedReport(context.Background(), rep, detail, newSigner())
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func loadReal(t *testing.T) *risk.Engine {
	t.Helper()
	eng, err := risk.Load(context.Background(), datatest.Real(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestReplayIsByteIdentical: with the same binary and data, replaying the
// document of a report served for a random covered place gives it back
// byte for byte, for 1,000 places in every covered part of the country,
// at both details: an auditor's replay must be able to confirm any report
// the service signed, wherever it is.
func TestReplayIsByteIdentical(t *testing.T) {
	eng := loadReal(t)
	r := rand.New(rand.NewPCG(29, 1000))
	generated := time.Date(2026, 11, 28, 7, 30, 0, 0, time.UTC)
	n := 0
	for n < 1000 {
		// The contiguous states, Alaska, Hawaii and the territories share
		// the draws, so the test meets every kind of coverage.
		lat, lon := randomPlace(r)
		a, err := eng.Assess(context.Background(), lat, lon)
		if err != nil {
			continue // outside coverage
		}
		detail := view.DetailSummary
		if n%2 == 1 {
			detail = view.DetailFull
		}
		doc := served(t, a, detail, generated)
		res, err := Run(context.Background(), eng, doc)
		if err != nil {
			t.Fatalf("%v, %v: %v", lat, lon, err)
		}
		if !res.Identical || !res.ByteForByte || len(res.Reasons) != 0 {
			t.Fatalf("%v, %v (%s): identical %v, byte for byte %v, reasons %v, differences %v",
				lat, lon, detail, res.Identical, res.ByteForByte, res.Reasons, res.Differences)
		}
		n++
	}
}

// randomPlace draws a point in one of the boxes that hold the covered
// places: the contiguous states most of the time, else Alaska, Hawaii,
// Puerto Rico and the other territories.
func randomPlace(r *rand.Rand) (lat, lon float64) {
	boxes := [][4]float64{ // south, north, west, east
		{24.5, 49.4, -124.8, -66.9},
		{54.5, 71.4, -168.0, -130.0},
		{18.9, 22.3, -160.3, -154.8},
		{17.9, 18.5, -67.3, -65.2},
		{13.2, 20.6, 144.6, 146.1},
	}
	b := boxes[0]
	if r.IntN(10) == 0 {
		b = boxes[1+r.IntN(len(boxes)-1)]
	}
	return b[0] + r.Float64()*(b[1]-b[0]), b[2] + r.Float64()*(b[3]-b[2])
}

// TestReplaySaysWhatDiffers: a document whose score, data version or
// narrative was changed replays as different, naming each changed field
// and, for the data version, why; a re-indented document is still
// identical member for member, though not byte for byte.
func TestReplaySaysWhatDiffers(t *testing.T) {
	eng := loadReal(t)
	a, err := eng.Assess(context.Background(), 39.7392, -104.9903)
	if err != nil {
		t.Fatal(err)
	}
	doc := served(t, a, view.DetailFull, time.Date(2026, 11, 28, 7, 30, 0, 0, time.UTC))

	// A document saved exactly as served, final newline and all, replays
	// as identical, reports the digest it records, and is left as it was
	// (an append into the caller's array once cut its signature member).
	saved := append(bytes.Clone(doc), '\n')
	before := bytes.Clone(saved)
	res, err := Run(context.Background(), eng, saved)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Identical || !res.ByteForByte {
		t.Errorf("saved as served: identical %v, byte for byte %v, differences %v", res.Identical, res.ByteForByte, res.Differences)
	}
	if res.RecordedSHA256 == "" || res.RecordedSHA256 != res.ReportSHA256 {
		t.Errorf("recorded digest %q, recomputed %q", res.RecordedSHA256, res.ReportSHA256)
	}
	if !bytes.Equal(saved, before) {
		t.Errorf("Run changed the document it was given")
	}

	tests := []struct {
		name      string
		edit      func(string) string
		paths     []string
		reason    string
		identical bool
	}{
		{"score", func(s string) string {
			return strings.Replace(s, `"overallScore":`, `"overallScore":1`, 1)
		}, []string{"$.summary.overallScore"}, "", false},
		{"data version", func(s string) string {
			return strings.Replace(s, `"dataVersion":"data-`, `"dataVersion":"data-0`, -1)
		}, []string{"$.dataVersion", "$.provenance.dataVersion"}, "different data version", false},
		{"reindented", func(s string) string {
			return strings.ReplaceAll(s, `,"`, ",\n  \"")
		}, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), eng, []byte(tt.edit(string(doc))))
			if err != nil {
				t.Fatal(err)
			}
			if res.Identical != tt.identical || res.ByteForByte {
				t.Fatalf("identical %v byte for byte %v; differences %v", res.Identical, res.ByteForByte, res.Differences)
			}
			var got []string
			for _, d := range res.Differences {
				got = append(got, d.Path)
			}
			for _, p := range tt.paths {
				if !strings.Contains(strings.Join(got, " "), p) {
					t.Errorf("differences %v do not name %s", got, p)
				}
			}
			if tt.paths != nil && len(got) != len(tt.paths) {
				t.Errorf("differences %v, want only %v", got, tt.paths)
			}
			if tt.reason != "" && !strings.Contains(strings.Join(res.Reasons, "; "), tt.reason) {
				t.Errorf("reasons %v, want %q", res.Reasons, tt.reason)
			}
		})
	}
	if _, err := Run(context.Background(), eng, []byte(`{"apiVersion":"v1"}`)); err == nil {
		t.Error("a document without provenance replayed")
	}
}

// TestReplayBeforeTheOutlook: a report made before methodology 4.1 has no
// outlook; replayed with this binary it differs by the outlook members
// (and what records the method), and the replay says why: a different
// methodology version (docs/methodology.md, "Determinism and versions").
func TestReplayBeforeTheOutlook(t *testing.T) {
	eng := loadReal(t)
	a, err := eng.Assess(context.Background(), 39.7392, -104.9903)
	if err != nil {
		t.Fatal(err)
	}
	const old = "locrisk-methodology-4.0"
	a.Summary.Outlook, a.Summary.OutlookUnavailable = risk.Recorded[risk.OutlookBrief]{}, nil
	a.Report.Outlook, a.Report.OutlookUnavailable = risk.Recorded[risk.Outlook]{}, nil
	a.Report.Methodology.Version, a.Provenance.MethodologyVersion = old, old
	doc := served(t, a, view.DetailFull, time.Date(2026, 11, 28, 7, 30, 0, 0, time.UTC))
	if bytes.Contains(doc, []byte(`"outlook"`)) {
		t.Fatal("the document of a report made before the outlook has one")
	}
	res, err := Run(context.Background(), eng, doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Differences {
		got = append(got, d.Path)
	}
	want := []string{"$.provenance.methodologyVersion", "$.provenance.reportSha256", "$.report.methodology.version", "$.report.outlook", "$.summary.outlook"}
	if res.Identical || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("differences %v, want %v", got, want)
	}
	if !strings.Contains(strings.Join(res.Reasons, "; "), "different methodology version: the document's is "+old) {
		t.Errorf("reasons %v", res.Reasons)
	}
}
