package risk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// summaryMember is the JSON name of Assessment.Summary.
const summaryMember = "summary"

// ReadSummary decodes the Summary of an Assessment encoded as JSON (a stored
// report's body) without decoding the rest. The engine writes the summary
// before the full report, so the full report, by far the larger part, is not
// even scanned. Readers of stored reports that need only the headline
// scores (the batch items and results.csv) use this rather than picking
// members out of the JSON themselves, so the shape stays this package's.
func ReadSummary(body []byte) (Summary, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return Summary{}, fmt.Errorf("read summary: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Summary{}, errors.New("read summary: the report is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Summary{}, fmt.Errorf("read summary: %w", err)
		}
		if key, _ := tok.(string); key == summaryMember {
			var s Summary
			if err := dec.Decode(&s); err != nil {
				return Summary{}, fmt.Errorf("read summary: %w", err)
			}
			return s, nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return Summary{}, fmt.Errorf("read summary: %w", err)
		}
	}
	return Summary{}, errors.New("read summary: the report has no summary")
}

// ReadScores is ReadSummary reduced to what a batch item shows (the items
// endpoint and results.csv): the overall score, the risk level and the
// module scores by module key, a nil score where no data covers the
// module. It is the reader the SQLite store is handed
// (store.Options.ReportScores, set in cmd/locrisk), in plain values, so
// that the store reads stored reports without importing the engine.
func ReadScores(body []byte) (overall int, level string, modules map[string]*int, err error) {
	s, err := ReadSummary(body)
	if err != nil {
		return 0, "", nil, err
	}
	modules = make(map[string]*int, len(s.ModuleScores))
	for _, m := range s.ModuleScores {
		modules[m.Module] = m.Value
	}
	return s.OverallScore, s.RiskLevel, modules, nil
}
