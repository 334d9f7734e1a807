package locrisk

// Watchlists (docs/api.md, Watchlists): an account's standing list of
// coordinates whose reports follow the data. An item is scored by an
// ordinary report job when it is added (charged to the quota like a batch
// item); afterwards it is re-scored in a low-priority lane whenever the
// serving data or methodology version differs from the one its current
// report was made with, or when the account asks for it (docs/api.md,
// Re-scoring), and those re-scores are not charged. Each completed job of
// an item makes its report the item's current one and the one before its
// previous; whether the two differ materially is decided in the job's
// final transaction (finaltx.go, and the report.changed event of
// internal/outbox).

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Limits and defaults of watchlists (docs/api.md, Watchlists).
const (
	// DefaultMinScoreChange is a list's minScoreChange when none is given:
	// a module score must move by at least this much (or a risk level
	// change) for a re-score to count as a change.
	DefaultMinScoreChange = 5
	// MaxMinScoreChange bounds minScoreChange; scores are 0..100.
	MaxMinScoreChange = 100
	// MaxWatchItemsPerRequest is how many items one create or add request
	// carries: a batch's size.
	MaxWatchItemsPerRequest = MaxBatchItems
	// MaxWatchlistItems is how many items one watchlist holds.
	MaxWatchlistItems = 10000
	// MaxWatchlistNameLen is the longest name, in characters.
	MaxWatchlistNameLen = 200
	// RescoreRequestInterval is how often one watchlist may be re-scored
	// on demand.
	RescoreRequestInterval = 10 * time.Minute
)

// ErrWatchlistFull is returned when adding items would bring a watchlist
// over MaxWatchlistItems; nothing is added.
var ErrWatchlistFull = errors.New("watchlist is full")

// RescoreTooSoonError is returned (wrapping ErrRescoreTooSoon) when a
// watchlist was re-scored on demand less than RescoreRequestInterval ago.
type RescoreTooSoonError struct {
	// Allowed is when the next on-demand re-score of the list may be
	// asked for.
	Allowed time.Time
}

// ErrRescoreTooSoon is what RescoreTooSoonError unwraps to.
var ErrRescoreTooSoon = errors.New("watchlist was re-scored on demand too recently")

func (e *RescoreTooSoonError) Error() string {
	return fmt.Sprintf("%v: the next re-score may be asked for at %s", ErrRescoreTooSoon, e.Allowed.UTC().Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrRescoreTooSoon) hold.
func (e *RescoreTooSoonError) Unwrap() error { return ErrRescoreTooSoon }

// CheckRescoreRequest decides whether a watchlist last re-scored on demand
// at last (nil: never) may be re-scored on demand at now.
func CheckRescoreRequest(last *time.Time, now time.Time) error {
	if last == nil {
		return nil
	}
	if next := last.Add(RescoreRequestInterval); now.Before(next) {
		return &RescoreTooSoonError{Allowed: next}
	}
	return nil
}

// Watchlist is a watchlist as the API shows it.
type Watchlist struct {
	ID             string
	AccountID      string
	Name           string
	MinScoreChange int
	// ItemCount is how many items the list holds; ChangedCount how many
	// of them changed materially at their last re-score
	// (WatchItem.Changed).
	ItemCount, ChangedCount int
	CreatedUTC              time.Time
	// RescoreRequestedUTC is when the list was last re-scored on demand;
	// nil when never.
	RescoreRequestedUTC *time.Time
}

// NewWatchlist describes a watchlist to create. The API has already
// refused the items whose coordinate is invalid or outside coverage, and
// reports them to the caller; every item here is valid and becomes a
// report job.
type NewWatchlist struct {
	AccountID      string
	Name           string
	MinScoreChange int // 0 means DefaultMinScoreChange
	Items          []NewWatchItem
}

// NewWatchItem is one valid item to add to a watchlist.
type NewWatchItem struct {
	ExternalID          string
	Latitude, Longitude float64
}

// Normalized checks nw and returns it with its minScoreChange set.
func (nw NewWatchlist) Normalized() (NewWatchlist, error) {
	if nw.AccountID == "" {
		return NewWatchlist{}, fmt.Errorf("%w: a watchlist needs an account", ErrInvalid)
	}
	if nw.MinScoreChange == 0 {
		nw.MinScoreChange = DefaultMinScoreChange
	}
	if nw.MinScoreChange < 1 || nw.MinScoreChange > MaxMinScoreChange {
		return NewWatchlist{}, fmt.Errorf("%w: minScoreChange %d is not 1..%d", ErrInvalid, nw.MinScoreChange, MaxMinScoreChange)
	}
	if n := utf8.RuneCountInString(nw.Name); n > MaxWatchlistNameLen {
		return NewWatchlist{}, fmt.Errorf("%w: watchlist name is %d characters long; at most %d are allowed", ErrInvalid, n, MaxWatchlistNameLen)
	}
	if err := CheckWatchItems(nw.Items, true); err != nil {
		return NewWatchlist{}, err
	}
	return nw, nil
}

// CheckWatchItems checks the items of one request: at most
// MaxWatchItemsPerRequest, each with a coordinate in range. A list may be
// created empty (allowEmpty); items are added at least one at a time.
func CheckWatchItems(items []NewWatchItem, allowEmpty bool) error {
	switch {
	case len(items) == 0 && !allowEmpty:
		return fmt.Errorf("%w: no items to add", ErrInvalid)
	case len(items) > MaxWatchItemsPerRequest:
		return fmt.Errorf("%w: %d items in one request; at most %d", ErrInvalid, len(items), MaxWatchItemsPerRequest)
	}
	for i, it := range items {
		if it.Latitude < -90 || it.Latitude > 90 || it.Longitude < -180 || it.Longitude > 180 {
			return fmt.Errorf("%w: item %d: coordinate (%v, %v) out of range", ErrInvalid, i+1, it.Latitude, it.Longitude)
		}
		if utf8.RuneCountInString(it.ExternalID) > MaxExternalIDLen {
			return fmt.Errorf("%w: item %d: externalId longer than %d characters", ErrInvalid, i+1, MaxExternalIDLen)
		}
	}
	return nil
}

// MaxExternalIDLen is the longest externalId of a batch or watchlist item,
// in characters (docs/api.md, Batches).
const MaxExternalIDLen = 128

// CheckWatchlistRoom refuses items that would bring a list holding count
// items over MaxWatchlistItems (ErrWatchlistFull).
func CheckWatchlistRoom(count, adding int) error {
	if count+adding > MaxWatchlistItems {
		return fmt.Errorf("%w: it holds %d items and may hold %d; %d more do not fit", ErrWatchlistFull, count, MaxWatchlistItems, adding)
	}
	return nil
}

// Watchlist is the list nw creates with id at now, holding no item yet.
func (nw NewWatchlist) Watchlist(id string, now time.Time) Watchlist {
	return Watchlist{ID: id, AccountID: nw.AccountID, Name: nw.Name, MinScoreChange: nw.MinScoreChange, CreatedUTC: now}
}

// ScoreVersions are what made a report (docs/verification.md): the data
// pack's version, the methodology's and the engine's. A re-score follows
// a change of the first two; the engine's is recorded, not followed, as a
// release that changes no formula keeps the methodology version.
type ScoreVersions struct {
	Data, Methodology, Engine string
}

// Complete reports whether the versions that decide a re-score are known.
func (v ScoreVersions) Complete() bool { return v.Data != "" && v.Methodology != "" }

// Follows reports whether a report made with v is current under serving:
// the same data and methodology versions.
func (v ScoreVersions) Follows(serving ScoreVersions) bool {
	return v.Data == serving.Data && v.Methodology == serving.Methodology
}

// WatchItem is an item of a watchlist as the API shows it: its own
// fields, its latest job's status (its first scoring or its latest
// re-score), and its current and previous reports.
type WatchItem struct {
	ID, WatchlistID, AccountID string
	ExternalID                 string
	Latitude, Longitude        float64
	CreatedUTC                 time.Time
	// JobID is the item's latest job, JobStatus its status and, once it
	// failed, JobErrorCode and JobErrorMessage its error.
	JobID                         *string
	JobStatus                     *string
	JobErrorCode, JobErrorMessage *string
	// Current is the item's current report; nil until its first job
	// completes. A failed re-score leaves it as it was.
	Current *WatchReport
	// PreviousReportID is the report Current replaced; nil until a
	// re-score completes.
	PreviousReportID *string
	// Changed is whether Current differs materially from the previous
	// report (docs/api.md, Watchlists); false without one.
	Changed bool
	// LastChangedUTC is when a re-score last changed the item materially;
	// nil when none has.
	LastChangedUTC *time.Time
}

// WatchReport is a report of a watch item: its id and job, what made it,
// when, and its summary scores.
type WatchReport struct {
	ReportID     string
	JobID        string
	Versions     ScoreVersions
	GeneratedUTC time.Time
	Scores       *ReportScores
}

// WatchItemState is a watch item as the final transition of one of its
// jobs reads and writes it (FinishJob): the item, and the list's
// minScoreChange.
type WatchItemState struct {
	WatchItem
	MinScoreChange int
}

// Advance is the item once job, one of its jobs, has ended with rep (nil
// when it failed): a completed job's report becomes the current one, the
// current one the previous, and Changed false until the change is judged
// (MarkWatchItemChanged); a failed job changes no report. compare reports
// whether a previous report exists to compare the new one with.
func (st WatchItemState) Advance(job Job, rep *Report) (next WatchItemState, compare bool) {
	next = st
	if job.Status != StatusCompleted || rep == nil {
		return next, false
	}
	cur := &WatchReport{ReportID: rep.ID, JobID: job.ID, GeneratedUTC: rep.GeneratedUTC, Scores: rep.Scores,
		Versions: ScoreVersions{Data: rep.DataVersion, Methodology: rep.MethodologyVersion, Engine: rep.EngineVersion}}
	if st.Current != nil {
		prev := st.Current.ReportID
		next.PreviousReportID = &prev
	}
	next.Current, next.Changed = cur, false
	return next, st.Current != nil
}

// WatchChange is what the hooks of a watch item's job's final transition
// see when the job gave the item a new report and it had one before
// (Tx.WatchChange): the item as it now stands, and the report it had.
type WatchChange struct {
	Item     WatchItemState
	Previous WatchReport
	// Report is the new current report, with its body.
	Report Report
}

// ScoresEqual reports whether two reports' summary scores are the same:
// the overall score and level, and every module's score (null where no
// data). Risk levels follow from scores (docs/api.md, Reports), so two
// reports with equal scores cannot differ materially, and their bodies
// need not be compared. Unknown scores (nil) are never equal.
func ScoresEqual(a, b *ReportScores) bool {
	if a == nil || b == nil || a.Overall != b.Overall || a.RiskLevel != b.RiskLevel || len(a.Modules) != len(b.Modules) {
		return false
	}
	bm := make(map[string]*int, len(b.Modules))
	for _, m := range b.Modules {
		bm[m.Module] = m.Score
	}
	for _, m := range a.Modules {
		s, ok := bm[m.Module]
		switch {
		case !ok:
			return false
		case (s == nil) != (m.Score == nil):
			return false
		case s != nil && *s != *m.Score:
			return false
		}
	}
	return true
}

// Reasons a re-score was planned (watch_rescores.trigger_key): a version
// change names the versions re-scored to, an on-demand request its id.
const (
	rescoreVersionPrefix = "v:"
	rescoreRequestPrefix = "r:"
)

// RescoreVersionKey is the trigger of the re-scores to v: an item gets at
// most one per pair of data and methodology versions, whatever the number
// of nodes planning it.
func RescoreVersionKey(v ScoreVersions) string {
	return rescoreVersionPrefix + v.Data + "/" + v.Methodology
}

// RescoreRequestKey is the trigger of the re-scores of one on-demand
// request.
func RescoreRequestKey(requestID string) string { return rescoreRequestPrefix + requestID }

// IsVersionRescore reports whether trigger is a version change's.
func IsVersionRescore(trigger string) bool {
	return len(trigger) >= len(rescoreVersionPrefix) && trigger[:len(rescoreVersionPrefix)] == rescoreVersionPrefix
}

// RescoreRequest is the answer to an on-demand re-score: how many items
// were planned, at when.
type RescoreRequest struct {
	WatchlistID  string
	Items        int
	RequestedUTC time.Time
}

// RescoreBacklog is the state of the re-score lane, for operators
// (locrisk watchlists rescores): the re-scores planned and not yet
// started, and those started, by trigger kind.
type RescoreBacklog struct {
	PendingVersion, PendingRequested int
	Started                          int
	// Oldest is when the oldest pending re-score was planned; nil when
	// none is pending.
	Oldest *time.Time
}

// RescoreCandidate is a planned re-score a claim looks at: the item, its
// latest job's status, and its current report's versions.
type RescoreCandidate struct {
	Item            WatchItem
	Trigger         string
	LatestJobOpen   bool
	CurrentVersions *ScoreVersions
	PlannedUTC      time.Time
}

// RescoreVerdict is what a claim does with a planned re-score: run it, or
// drop it because it is no longer needed.
type RescoreVerdict int

const (
	// RescoreRun: make the item's re-score job now.
	RescoreRun RescoreVerdict = iota
	// RescoreDrop: the item already follows the versions re-scored to, or
	// a job of it is open that will bring it there; the plan is dropped
	// (a later plan, after another version change, is a new one).
	RescoreDrop
)

// Verdict decides a planned re-score for a claimer serving v: a version
// change's is dropped once the item's report follows v or while a job of
// the item is open (that job brings it to the claimer's versions); an
// on-demand request's runs unless a job of the item is open.
func (c RescoreCandidate) Verdict(v ScoreVersions) RescoreVerdict {
	if c.LatestJobOpen {
		return RescoreDrop
	}
	if IsVersionRescore(c.Trigger) && c.CurrentVersions != nil && c.CurrentVersions.Follows(v) {
		return RescoreDrop
	}
	return RescoreRun
}

// RescoreJob is the job of a re-score of item claimed by owner at now
// until now+lease: processing at once under owner's lease, its first
// attempt started, so it never waits in the queue ahead of callers'
// jobs (docs/api.md, Re-scoring). Its bucket is bulk, like the item's
// first job; it uses no quota.
func RescoreJob(id string, item WatchItem, now time.Time) Job {
	j := NewJob{AccountID: item.AccountID, Bucket: BucketBulk, Latitude: item.Latitude, Longitude: item.Longitude}.Job(id, now)
	j.Status, j.Attempts = StatusProcessing, 1
	itemID := item.ID
	j.WatchItemID = &itemID
	return j
}

// ItemJob is the first job of the new item itemID of the account, made
// with jobID at now: a bulk job like a batch item's.
func (it NewWatchItem) ItemJob(jobID, accountID, itemID string, now time.Time) Job {
	j := NewJob{AccountID: accountID, Bucket: BucketBulk, Latitude: it.Latitude, Longitude: it.Longitude}.Job(jobID, now)
	j.WatchItemID = &itemID
	return j
}

// CheckRescoreClaim checks the arguments of a re-score claim: an owner,
// a positive lease, and the serving versions.
func CheckRescoreClaim(owner string, lease time.Duration, v ScoreVersions) error {
	if err := CheckJobClaim(owner, lease); err != nil {
		return err
	}
	if !v.Complete() {
		return fmt.Errorf("%w: a re-score claim needs the serving data and methodology versions", ErrInvalid)
	}
	return nil
}

// WatchItemRecord is a watch item as a store reads it: the item's own
// columns, its latest job's status and error, its current report's
// columns and its list's minScoreChange (nil where NULL; the times each
// store reads itself). Stores select these column names.
type WatchItemRecord struct {
	ID                 string  `db:"id"`
	WatchlistID        string  `db:"watchlist_id"`
	AccountID          string  `db:"account_id"`
	ExternalID         string  `db:"external_id"`
	Latitude           float64 `db:"latitude"`
	Longitude          float64 `db:"longitude"`
	JobID              *string `db:"job_id"`
	JobStatus          *string `db:"job_status"`
	JobErrorCode       *string `db:"job_error_code"`
	JobErrorMessage    *string `db:"job_error_message"`
	ReportID           *string `db:"report_id"`
	ReportJobID        *string `db:"report_job_id"`
	DataVersion        *string `db:"data_version"`
	MethodologyVersion *string `db:"methodology_version"`
	EngineVersion      *string `db:"engine_version"`
	OverallScore       *int    `db:"overall_score"`
	RiskLevel          *string `db:"risk_level"`
	ModuleScores       *string `db:"module_scores"`
	PreviousReportID   *string `db:"previous_report_id"`
	Changed            bool    `db:"changed"`
	MinScoreChange     int     `db:"min_score_change"`
}

// Item is the item r holds, with the times the store read: its creation,
// its current report's (nil without one) and its last change (nil when
// none). The job's error shows only once the job failed: a queued job may
// still carry the error of an attempt being retried.
func (r WatchItemRecord) Item(created time.Time, generated, lastChanged *time.Time) WatchItem {
	it := WatchItem{ID: r.ID, WatchlistID: r.WatchlistID, AccountID: r.AccountID, ExternalID: r.ExternalID,
		Latitude: r.Latitude, Longitude: r.Longitude, CreatedUTC: created, JobID: r.JobID, JobStatus: r.JobStatus,
		PreviousReportID: r.PreviousReportID, Changed: r.Changed, LastChangedUTC: lastChanged}
	if r.JobStatus != nil && *r.JobStatus == StatusFailed {
		it.JobErrorCode, it.JobErrorMessage = r.JobErrorCode, r.JobErrorMessage
	}
	if r.ReportID != nil && generated != nil {
		cur := &WatchReport{ReportID: *r.ReportID, GeneratedUTC: *generated,
			Scores: ParseReportScores(r.OverallScore, r.RiskLevel, r.ModuleScores)}
		if r.ReportJobID != nil {
			cur.JobID = *r.ReportJobID
		}
		for _, v := range []struct {
			dst *string
			src *string
		}{{&cur.Versions.Data, r.DataVersion}, {&cur.Versions.Methodology, r.MethodologyVersion}, {&cur.Versions.Engine, r.EngineVersion}} {
			if v.src != nil {
				*v.dst = *v.src
			}
		}
		it.Current = cur
	}
	return it
}

// State is the item r holds with its list's minScoreChange, as a job's
// final transition reads it (FinalTxOps.LockWatchItem).
func (r WatchItemRecord) State(created time.Time, generated, lastChanged *time.Time) WatchItemState {
	return WatchItemState{WatchItem: r.Item(created, generated, lastChanged), MinScoreChange: r.MinScoreChange}
}

// StoredScores are the columns a store keeps of a watch item's current
// report's scores (ModulesJSON's form for the modules); all nil without
// scores.
func (c *WatchReport) StoredScores() (overall *int, level, modules *string, err error) {
	if c == nil || c.Scores == nil {
		return nil, nil, nil, nil
	}
	m, err := c.Scores.ModulesJSON()
	if err != nil {
		return nil, nil, nil, err
	}
	o, l := c.Scores.Overall, c.Scores.RiskLevel
	return &o, &l, &m, nil
}
