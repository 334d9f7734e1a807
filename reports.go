package locrisk

import (
	"time"
)

// Report is a stored report: written once, when its job completes, and
// served from here ever after (never recomputed).
type Report struct {
	ID           string // lowercase UUID
	JobID        string
	AccountID    string
	GeneratedUTC time.Time
	DataVersion  string
	// MethodologyVersion and EngineVersion are the body's provenance,
	// which the job's worker hands over with it (a watch item keeps the
	// versions of its current report, docs/api.md, Watchlists); "" when
	// not known. Stores keep them in the body only.
	MethodologyVersion, EngineVersion string
	Body                              []byte // the risk.Assessment as JSON
	// Scores are the body's summary scores, which the job's worker hands
	// over with the body so that the store keeps them beside it: a batch's
	// items list them without reading any body, and an operator finds them
	// in the database without decoding one. Nil for a body without a
	// summary.
	Scores *ReportScores
}

// ReportScores are a report's summary scores (docs/api.md, Reports:
// summary.overallScore, riskLevel and moduleScores).
type ReportScores struct {
	Overall   int
	RiskLevel string
	// Modules are the module scores in the report's order; a nil score
	// where no data covers the module.
	Modules []ModuleScore
}

// ModuleScore is one module's score.
type ModuleScore struct {
	Module string
	Score  *int
}
