package locrisk

import (
	"errors"
	"testing"
	"time"
)

func TestScoresEqual(t *testing.T) {
	i := func(v int) *int { return &v }
	base := func() *ReportScores {
		return &ReportScores{Overall: 40, RiskLevel: "moderate",
			Modules: []ModuleScore{{Module: "hydrology", Score: i(50)}, {Module: "wildfire"}}}
	}
	for _, tc := range []struct {
		name  string
		edit  func(s *ReportScores) *ReportScores
		equal bool
	}{
		{"same", func(s *ReportScores) *ReportScores { return s }, true},
		{"modules in another order", func(s *ReportScores) *ReportScores {
			s.Modules[0], s.Modules[1] = s.Modules[1], s.Modules[0]
			return s
		}, true},
		{"overall moved", func(s *ReportScores) *ReportScores { s.Overall = 41; return s }, false},
		{"level", func(s *ReportScores) *ReportScores { s.RiskLevel = "low"; return s }, false},
		{"module moved", func(s *ReportScores) *ReportScores { s.Modules[0].Score = i(51); return s }, false},
		{"module gained data", func(s *ReportScores) *ReportScores { s.Modules[1].Score = i(0); return s }, false},
		{"module lost data", func(s *ReportScores) *ReportScores { s.Modules[0].Score = nil; return s }, false},
		{"another module", func(s *ReportScores) *ReportScores { s.Modules[1].Module = "landslide"; return s }, false},
		{"a module more", func(s *ReportScores) *ReportScores {
			s.Modules = append(s.Modules, ModuleScore{Module: "landslide"})
			return s
		}, false},
		{"unknown", func(*ReportScores) *ReportScores { return nil }, false},
	} {
		if got := ScoresEqual(base(), tc.edit(base())); got != tc.equal {
			t.Errorf("%s: ScoresEqual = %v, want %v", tc.name, got, tc.equal)
		}
	}
}

func TestParseReportScores(t *testing.T) {
	sc := &ReportScores{Overall: 40, RiskLevel: "moderate", Modules: []ModuleScore{{Module: "wildfire"}, {Module: "hydrology"}}}
	v := 7
	sc.Modules[1].Score = &v
	stored, err := sc.ModulesJSON()
	if err != nil {
		t.Fatal(err)
	}
	o, l := 40, "moderate"
	got := ParseReportScores(&o, &l, &stored)
	if !ScoresEqual(got, sc) || got.Modules[0].Module != "wildfire" || got.Modules[1].Module != "hydrology" {
		t.Errorf("round trip %+v of %s", got, stored)
	}
	bad := "[1]"
	for name, args := range map[string][3]any{"no overall": {nil, &l, &stored}, "bad modules": {&o, &l, &bad}} {
		ov, _ := args[0].(*int)
		m, _ := args[2].(*string)
		if ParseReportScores(ov, args[1].(*string), m) != nil {
			t.Errorf("%s: scores read", name)
		}
	}
}

func TestCheckRescoreRequest(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := CheckRescoreRequest(nil, t0); err != nil {
		t.Errorf("never re-scored: %v", err)
	}
	err := CheckRescoreRequest(&t0, t0.Add(RescoreRequestInterval-time.Millisecond))
	var soon *RescoreTooSoonError
	if !errors.As(err, &soon) || !errors.Is(err, ErrRescoreTooSoon) || !soon.Allowed.Equal(t0.Add(RescoreRequestInterval)) {
		t.Errorf("within the interval: %v", err)
	}
	if err := CheckRescoreRequest(&t0, t0.Add(RescoreRequestInterval)); err != nil {
		t.Errorf("at the interval: %v", err)
	}
}

func TestRescoreVerdict(t *testing.T) {
	v1 := ScoreVersions{Data: "d1", Methodology: "m1", Engine: "e1"}
	v2 := ScoreVersions{Data: "d2", Methodology: "m1", Engine: "e1"}
	newEngine := ScoreVersions{Data: "d2", Methodology: "m1", Engine: "e2"}
	for _, tc := range []struct {
		name    string
		c       RescoreCandidate
		serving ScoreVersions
		want    RescoreVerdict
	}{
		{"version change, item behind", RescoreCandidate{Trigger: RescoreVersionKey(v2), CurrentVersions: &v1}, v2, RescoreRun},
		{"version change, item already there", RescoreCandidate{Trigger: RescoreVersionKey(v2), CurrentVersions: &v2}, v2, RescoreDrop},
		{"engine only differs", RescoreCandidate{Trigger: RescoreVersionKey(v2), CurrentVersions: &newEngine}, v2, RescoreDrop},
		{"version change, no report yet", RescoreCandidate{Trigger: RescoreVersionKey(v2)}, v2, RescoreRun},
		{"version change, job open", RescoreCandidate{Trigger: RescoreVersionKey(v2), CurrentVersions: &v1, LatestJobOpen: true}, v2, RescoreDrop},
		{"requested, item current", RescoreCandidate{Trigger: RescoreRequestKey("rsr_1"), CurrentVersions: &v2}, v2, RescoreRun},
		{"requested, job open", RescoreCandidate{Trigger: RescoreRequestKey("rsr_1"), LatestJobOpen: true}, v2, RescoreDrop},
	} {
		if got := tc.c.Verdict(tc.serving); got != tc.want {
			t.Errorf("%s: verdict %v, want %v", tc.name, got, tc.want)
		}
	}
	if !IsVersionRescore(RescoreVersionKey(v1)) || IsVersionRescore(RescoreRequestKey("x")) {
		t.Error("IsVersionRescore tells the triggers apart wrongly")
	}
}

func TestWatchItemAdvance(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	last := t0.Add(-time.Hour)
	st := WatchItemState{WatchItem: WatchItem{ID: "wli_1", Changed: true, LastChangedUTC: &last}, MinScoreChange: 5}
	first := Report{ID: "r1", DataVersion: "d1", MethodologyVersion: "m1", EngineVersion: "e1", GeneratedUTC: t0}
	done := Job{ID: "job_1", Status: StatusCompleted}
	next, compare := st.Advance(done, &first)
	if compare || next.Current == nil || next.Current.ReportID != "r1" || next.Current.JobID != "job_1" ||
		next.Current.Versions != (ScoreVersions{"d1", "m1", "e1"}) || next.PreviousReportID != nil || next.Changed ||
		next.LastChangedUTC != &last {
		t.Errorf("first report: %+v (compare %v)", next, compare)
	}
	second := Report{ID: "r2", GeneratedUTC: t0.Add(time.Minute)}
	next2, compare := next.Advance(Job{ID: "job_2", Status: StatusCompleted}, &second)
	if !compare || next2.Current.ReportID != "r2" || next2.PreviousReportID == nil || *next2.PreviousReportID != "r1" {
		t.Errorf("second report: %+v (compare %v)", next2, compare)
	}
	failed, compare := next2.Advance(Job{ID: "job_3", Status: StatusFailed}, nil)
	if compare || failed.Current.ReportID != "r2" || *failed.PreviousReportID != "r1" {
		t.Errorf("a failed re-score changed the reports: %+v", failed)
	}
}

func TestWatchlistLimits(t *testing.T) {
	if err := CheckWatchlistRoom(MaxWatchlistItems-1, 1); err != nil {
		t.Errorf("to the limit: %v", err)
	}
	if err := CheckWatchlistRoom(MaxWatchlistItems-1, 2); !errors.Is(err, ErrWatchlistFull) {
		t.Errorf("past the limit: %v", err)
	}
	for name, nw := range map[string]NewWatchlist{
		"long name":   {AccountID: "a", Name: string(make([]rune, MaxWatchlistNameLen+1))},
		"long label":  {AccountID: "a", Items: []NewWatchItem{{ExternalID: string(make([]rune, MaxExternalIDLen+1))}}},
		"bad lon":     {AccountID: "a", Items: []NewWatchItem{{Longitude: 181}}},
		"min too big": {AccountID: "a", MinScoreChange: MaxMinScoreChange + 1},
	} {
		if _, err := nw.Normalized(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	nw, err := NewWatchlist{AccountID: "a"}.Normalized()
	if err != nil || nw.MinScoreChange != DefaultMinScoreChange {
		t.Errorf("defaults: %+v %v", nw, err)
	}
}
