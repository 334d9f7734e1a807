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
	Body         []byte // the risk.Assessment as JSON
}
