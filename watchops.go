package locrisk

// The watchlist operations of several steps, the same in every store:
// creating a list and adding items (the quota and the items' first jobs),
// an on-demand re-score (its throttle), and the re-score lane's claim
// (which planned re-score runs, and how its job starts). A store supplies
// each step's SQL over its open transaction (WatchTxOps); the order of the
// checks, and so which error a request gets, is decided here once
// (docs/api.md, Watchlists).

import (
	"context"
	"fmt"
	"time"
)

// WatchTxOps is what a store does inside the transaction of a watchlist
// operation.
type WatchTxOps interface {
	QuotaUser
	// InsertWatchlist writes the new list w; ErrNotFound for an unknown
	// account.
	InsertWatchlist(ctx context.Context, w Watchlist) error
	// LockWatchlist reads the account's list and holds it against
	// concurrent changes until the transaction ends (ErrNotFound for none,
	// another account's included).
	LockWatchlist(ctx context.Context, accountID, watchlistID string) (Watchlist, error)
	// InsertWatchItems writes the items of list w with their first jobs
	// (jobs[i] is items[i]'s, queued) and counts them on the list.
	InsertWatchItems(ctx context.Context, w Watchlist, items []WatchItem, jobs []Job) error
	// SetRescoreRequested records an on-demand re-score of the list at now.
	SetRescoreRequested(ctx context.Context, watchlistID string, now time.Time) error
	// PlanListRescores plans a re-score of every item of the list under
	// trigger, planned at now, and returns how many.
	PlanListRescores(ctx context.Context, watchlistID, trigger string, now time.Time) (int, error)
}

// IDSource makes the ids of new rows (package ids).
type IDSource interface {
	WatchItemID() string
	JobID() string
}

// CreateWatchlistIn creates the list nw (Normalized) with id at now, and
// its items with their first jobs, taking one unit of the account's quota
// per item (*QuotaError when they do not fit: nothing is created).
func CreateWatchlistIn(ctx context.Context, ops WatchTxOps, ids IDSource, nw NewWatchlist, id string, now time.Time) (Watchlist, []WatchItem, error) {
	w := nw.Watchlist(id, now)
	if err := ops.InsertWatchlist(ctx, w); err != nil {
		return Watchlist{}, nil, err
	}
	items, err := addItems(ctx, ops, ids, w, nw.Items, now)
	if err != nil {
		return Watchlist{}, nil, err
	}
	w.ItemCount = len(items)
	return w, items, nil
}

// AddWatchItemsIn adds items (checked: CheckWatchItems) to the account's
// list at now, each with its first job, one unit of quota each: an unknown
// list is ErrNotFound, one that would hold more than MaxWatchlistItems
// ErrWatchlistFull, then *QuotaError; nothing is added unless all are.
func AddWatchItemsIn(ctx context.Context, ops WatchTxOps, ids IDSource, accountID, watchlistID string, items []NewWatchItem, now time.Time) ([]WatchItem, error) {
	w, err := ops.LockWatchlist(ctx, accountID, watchlistID)
	if err != nil {
		return nil, err
	}
	if err := CheckWatchlistRoom(w.ItemCount, len(items)); err != nil {
		return nil, err
	}
	return addItems(ctx, ops, ids, w, items, now)
}

// addItems writes items into w with their first jobs, after taking their
// quota.
func addItems(ctx context.Context, ops WatchTxOps, ids IDSource, w Watchlist, items []NewWatchItem, now time.Time) ([]WatchItem, error) {
	if len(items) == 0 {
		return []WatchItem{}, nil
	}
	if err := ops.UseQuota(ctx, w.AccountID, len(items), now); err != nil {
		return nil, err
	}
	out := make([]WatchItem, len(items))
	jobs := make([]Job, len(items))
	queued := StatusQueued
	for i, it := range items {
		itemID := ids.WatchItemID()
		jobs[i] = it.ItemJob(ids.JobID(), w.AccountID, itemID, now)
		jobID := jobs[i].ID
		out[i] = WatchItem{ID: itemID, WatchlistID: w.ID, AccountID: w.AccountID, ExternalID: it.ExternalID,
			Latitude: it.Latitude, Longitude: it.Longitude, CreatedUTC: now, JobID: &jobID, JobStatus: &queued}
	}
	if err := ops.InsertWatchItems(ctx, w, out, jobs); err != nil {
		return nil, err
	}
	return out, nil
}

// RequestRescoreIn plans a re-score of every item of the account's list,
// under the request's id, unless the list was re-scored on demand less
// than RescoreRequestInterval before now (*RescoreTooSoonError); an unknown
// list is ErrNotFound. The re-scores run in the low-priority lane, like
// those of a version change, and use no quota.
func RequestRescoreIn(ctx context.Context, ops WatchTxOps, accountID, watchlistID, requestID string, now time.Time) (RescoreRequest, error) {
	w, err := ops.LockWatchlist(ctx, accountID, watchlistID)
	if err != nil {
		return RescoreRequest{}, err
	}
	if err := CheckRescoreRequest(w.RescoreRequestedUTC, now); err != nil {
		return RescoreRequest{}, err
	}
	if err := ops.SetRescoreRequested(ctx, w.ID, now); err != nil {
		return RescoreRequest{}, err
	}
	n, err := ops.PlanListRescores(ctx, w.ID, RescoreRequestKey(requestID), now)
	if err != nil {
		return RescoreRequest{}, err
	}
	return RescoreRequest{WatchlistID: w.ID, Items: n, RequestedUTC: now}, nil
}

// RescoreClaimOps is what a store does inside the transaction of a
// re-score claim.
type RescoreClaimOps interface {
	// NextRescore reads the oldest planned re-score not started that a
	// claimer serving v may take (an on-demand request's, or a version
	// change's to v), and holds it against other claimers until the
	// transaction ends (skipping those they hold); ok is false when none
	// is left.
	NextRescore(ctx context.Context, v ScoreVersions) (c RescoreCandidate, ok bool, err error)
	// DropRescore deletes the planned re-score c.
	DropRescore(ctx context.Context, c RescoreCandidate) error
	// StartRescore writes job, processing under owner's lease until
	// leaseExpires, records it as c's and as its item's latest job.
	StartRescore(ctx context.Context, c RescoreCandidate, job Job, owner string, leaseExpires time.Time) error
}

// maxRescoreDrops bounds the planned re-scores one claim drops before it
// gives up for this time, so that its transaction stays short.
const maxRescoreDrops = 100

// ClaimRescoreIn starts the next planned re-score a claimer serving v
// may take: its job, processing under owner's lease from now, with its
// first attempt counted. Plans that are no longer needed
// (RescoreCandidate.Verdict) are dropped on the way. ok is false when
// nothing is left to start.
func ClaimRescoreIn(ctx context.Context, ops RescoreClaimOps, jobID func() string, owner string, v ScoreVersions, lease time.Duration, now time.Time) (Job, bool, error) {
	for range maxRescoreDrops {
		c, ok, err := ops.NextRescore(ctx, v)
		if err != nil || !ok {
			return Job{}, false, err
		}
		if c.Verdict(v) == RescoreDrop {
			if err := ops.DropRescore(ctx, c); err != nil {
				return Job{}, false, fmt.Errorf("drop re-score of %s: %w", c.Item.ID, err)
			}
			continue
		}
		job := RescoreJob(jobID(), c.Item, now)
		if err := ops.StartRescore(ctx, c, job, owner, now.Add(lease)); err != nil {
			return Job{}, false, fmt.Errorf("start re-score of %s: %w", c.Item.ID, err)
		}
		return job, true, nil
	}
	return Job{}, false, nil
}
