package reportcodec

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/klauspost/compress/dict"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

// realReports returns the bodies of n reports of random covered places in
// the contiguous United States (scripts/sample-portfolio's box), as the
// scheduler encodes them, on the real data; seed picks the places.
func realReports(tb testing.TB, n int, seed uint64) [][]byte {
	tb.Helper()
	e, err := risk.Load(context.Background(), datatest.Real(tb), nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 28))
	var out [][]byte
	for len(out) < n {
		a, err := e.Assess(context.Background(), 24.5+r.Float64()*24.9, -124.8+r.Float64()*57.9)
		if err != nil {
			continue // outside coverage
		}
		b, err := a.AppendJSON(nil)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestTrainDictionary writes a new dictionary, for a new codec, when
// LOCRISK_TRAIN_REPORT_DICT names the file (a released dictionary is never
// replaced: give the new one the next number, add its codec, make it
// Current):
//
//	LOCRISK_TRAIN_REPORT_DICT=internal/reportcodec/dict3.s2 go test -run TrainDictionary ./internal/reportcodec
func TestTrainDictionary(t *testing.T) {
	path := os.Getenv("LOCRISK_TRAIN_REPORT_DICT")
	if path == "" {
		t.Skip("need LOCRISK_TRAIN_REPORT_DICT=FILE: trains a new dictionary there")
	}
	d, err := dict.BuildS2Dict(realReports(t, 2000, 1), dict.Options{MaxDictSize: 64 << 10, HashBytes: 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, d, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d bytes", path, len(d))
}
