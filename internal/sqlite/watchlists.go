package sqlite

// Watchlists and their items (docs/api.md, Watchlists), the re-score lane
// that follows the data (PlanRescores, ClaimRescore), and the steps of a
// watch job's final transition (finalOps). The rules (quota, throttle,
// which planned re-score runs, how an item's reports move on) are the
// domain's (watchlists.go, watchops.go and finaltx.go at the root); this
// file holds their SQL. Migration 15 has the tables.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

// newIDs makes the ids of new items and jobs (locrisk.IDSource).
type newIDs struct{}

func (newIDs) WatchItemID() string { return ids.New(ids.WatchItem) }
func (newIDs) JobID() string       { return ids.New(ids.Job) }

// CreateWatchlist creates the list with its items and their first jobs in
// one transaction, with the quota (locrisk.CreateWatchlistIn).
func (s *Store) CreateWatchlist(ctx context.Context, nw locrisk.NewWatchlist, now time.Time) (locrisk.Watchlist, []locrisk.WatchItem, error) {
	nw, err := nw.Normalized()
	if err != nil {
		return locrisk.Watchlist{}, nil, err
	}
	now = truncMs(now)
	var w locrisk.Watchlist
	var items []locrisk.WatchItem
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		w, items, err = locrisk.CreateWatchlistIn(ctx, txOps{tx}, newIDs{}, nw, ids.New(ids.Watchlist), now)
		return err
	})
	if err != nil {
		return locrisk.Watchlist{}, nil, fmt.Errorf("create watchlist: %w", err)
	}
	return w, items, nil
}

// InsertWatchlist writes the new list (locrisk.WatchTxOps).
func (t txOps) InsertWatchlist(ctx context.Context, w locrisk.Watchlist) error {
	if _, err := getAccount(ctx, t.tx, w.AccountID); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO watchlists (id, account_id, name, min_score_change, item_count, created_utc)
		VALUES (?, ?, ?, ?, 0, ?)`, w.ID, w.AccountID, w.Name, w.MinScoreChange, FormatTime(w.CreatedUTC)); err != nil {
		return fmt.Errorf("insert watchlist: %w", err)
	}
	return nil
}

// LockWatchlist reads the account's list inside the write transaction,
// which SQLite holds alone (locrisk.WatchTxOps).
func (t txOps) LockWatchlist(ctx context.Context, accountID, watchlistID string) (locrisk.Watchlist, error) {
	return getWatchlist(ctx, t.tx, accountID, watchlistID)
}

// InsertWatchItems writes the items and their first jobs and counts them
// on the list (locrisk.WatchTxOps).
func (t txOps) InsertWatchItems(ctx context.Context, w locrisk.Watchlist, items []locrisk.WatchItem, jobs []locrisk.Job) error {
	ins, err := t.tx.PreparexContext(ctx, `INSERT INTO watch_items
		(id, watchlist_id, account_id, external_id, latitude, longitude, created_utc, job_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("prepare item insert: %w", err)
	}
	defer ins.Close()
	for i, it := range items {
		if err := insertWatchJob(ctx, t.tx, jobs[i], "", time.Time{}); err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, it.ID, w.ID, it.AccountID, it.ExternalID, it.Latitude, it.Longitude,
			FormatTime(it.CreatedUTC), jobs[i].ID); err != nil {
			return fmt.Errorf("insert watch item %d: %w", i+1, err)
		}
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE watchlists SET item_count = item_count + ? WHERE id = ?`, len(items), w.ID); err != nil {
		return fmt.Errorf("count watch items: %w", err)
	}
	return nil
}

// watchlistRow is a watchlists row with its count of changed items.
type watchlistRow struct {
	ID                  string         `db:"id"`
	AccountID           string         `db:"account_id"`
	Name                string         `db:"name"`
	MinScoreChange      int            `db:"min_score_change"`
	ItemCount           int            `db:"item_count"`
	ChangedCount        int            `db:"changed_count"`
	CreatedUTC          string         `db:"created_utc"`
	RescoreRequestedUTC sql.NullString `db:"rescore_requested_utc"`
}

// watchlistColumns are a list's columns and its changed items, counted on
// the partial index of changed items (watch_items_changed).
const watchlistColumns = `id, account_id, name, min_score_change, item_count, created_utc, rescore_requested_utc,
	(SELECT COUNT(*) FROM watch_items i WHERE i.watchlist_id = watchlists.id AND i.changed = 1) AS changed_count`

func (r watchlistRow) watchlist() (locrisk.Watchlist, error) {
	w := locrisk.Watchlist{ID: r.ID, AccountID: r.AccountID, Name: r.Name, MinScoreChange: r.MinScoreChange,
		ItemCount: r.ItemCount, ChangedCount: r.ChangedCount}
	var err error
	if w.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return locrisk.Watchlist{}, fmt.Errorf("watchlist %s: %w", r.ID, err)
	}
	if w.RescoreRequestedUTC, err = parseNullTime(r.RescoreRequestedUTC); err != nil {
		return locrisk.Watchlist{}, fmt.Errorf("watchlist %s: %w", r.ID, err)
	}
	return w, nil
}

func getWatchlist(ctx context.Context, q queryer, accountID, watchlistID string) (locrisk.Watchlist, error) {
	var r watchlistRow
	err := q.GetContext(ctx, &r, `SELECT `+watchlistColumns+` FROM watchlists WHERE id = ? AND account_id = ?`, watchlistID, accountID)
	if err := sqlrow.Got(err, "watchlist "+watchlistID); err != nil {
		return locrisk.Watchlist{}, err
	}
	return r.watchlist()
}

// GetWatchlist returns the account's list; another account's is
// ErrNotFound.
func (s *Store) GetWatchlist(ctx context.Context, accountID, watchlistID string) (locrisk.Watchlist, error) {
	return getWatchlist(ctx, s.db, accountID, watchlistID)
}

// ListWatchlists pages the account's lists newest first, like ListBatches.
func (s *Store) ListWatchlists(ctx context.Context, accountID string, limit int, cursor string) ([]locrisk.Watchlist, string, error) {
	pg, err := newPage(limit, cursor, ids.Watchlist)
	if err != nil {
		return nil, "", err
	}
	q, args := pageQuery(pg, `SELECT `+watchlistColumns+` FROM watchlists WHERE account_id = ?`, []any{accountID})
	var rows []watchlistRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list watchlists: %w", err)
	}
	out, err := sqlrow.Map(rows, watchlistRow.watchlist)
	if err != nil {
		return nil, "", err
	}
	out, next := locrisk.PageRows(pg, out, func(w locrisk.Watchlist) (time.Time, string) { return w.CreatedUTC, w.ID })
	return out, next, nil
}

// DeleteWatchlist deletes the list, its items and their planned re-scores
// in one transaction; the items' jobs and reports stay.
func (s *Store) DeleteWatchlist(ctx context.Context, accountID, watchlistID string) error {
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := getWatchlist(ctx, tx, accountID, watchlistID); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM watch_rescores WHERE item_id IN (SELECT id FROM watch_items WHERE watchlist_id = ?)`,
			`DELETE FROM watch_items WHERE watchlist_id = ?`,
			`DELETE FROM watchlists WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, watchlistID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete watchlist %s: %w", watchlistID, err)
	}
	return nil
}

// AddWatchItems adds items with their first jobs in one transaction, with
// the room and the quota (locrisk.AddWatchItemsIn).
func (s *Store) AddWatchItems(ctx context.Context, accountID, watchlistID string, items []locrisk.NewWatchItem, now time.Time) ([]locrisk.WatchItem, error) {
	if err := locrisk.CheckWatchItems(items, false); err != nil {
		return nil, err
	}
	now = truncMs(now)
	var out []locrisk.WatchItem
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		out, err = locrisk.AddWatchItemsIn(ctx, txOps{tx}, newIDs{}, accountID, watchlistID, items, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("add watch items: %w", err)
	}
	return out, nil
}

// RemoveWatchItems removes the list's items of these ids with their
// planned re-scores, and uncounts them, in one transaction.
func (s *Store) RemoveWatchItems(ctx context.Context, accountID, watchlistID string, itemIDs []string) ([]string, error) {
	removed := []string{}
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		removed = removed[:0]
		if _, err := getWatchlist(ctx, tx, accountID, watchlistID); err != nil {
			return err
		}
		for _, id := range itemIDs {
			// The plans first: they refer to the item.
			if _, err := tx.ExecContext(ctx, `DELETE FROM watch_rescores
				WHERE item_id = ?1 AND EXISTS (SELECT 1 FROM watch_items WHERE id = ?1 AND watchlist_id = ?2)`, id, watchlistID); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM watch_items WHERE id = ? AND watchlist_id = ?`, id, watchlistID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				removed = append(removed, id) // not the list's, or named twice: 0
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE watchlists SET item_count = item_count - ? WHERE id = ?`, len(removed), watchlistID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("remove watch items: %w", err)
	}
	return removed, nil
}

// watchItemRow is a watch item as watchItemSelect reads it: the domain's
// record and the times as text.
type watchItemRow struct {
	locrisk.WatchItemRecord
	CreatedUTC     string         `db:"created_utc"`
	GeneratedUTC   sql.NullString `db:"generated_utc"`
	LastChangedUTC sql.NullString `db:"last_changed_utc"`
}

func (r watchItemRow) times() (created time.Time, generated, lastChanged *time.Time, err error) {
	if created, err = ParseTime(r.CreatedUTC); err != nil {
		return
	}
	if generated, err = parseNullTime(r.GeneratedUTC); err != nil {
		return
	}
	lastChanged, err = parseNullTime(r.LastChangedUTC)
	return
}

func (r watchItemRow) item() (locrisk.WatchItem, error) {
	c, g, l, err := r.times()
	if err != nil {
		return locrisk.WatchItem{}, fmt.Errorf("watch item %s: %w", r.ID, err)
	}
	return r.Item(c, g, l), nil
}

// watchItemSelect reads items with their latest job's status and error.
const watchItemSelect = `SELECT i.id, i.watchlist_id, i.account_id, i.external_id, i.latitude, i.longitude, i.created_utc,
		i.job_id, j.status AS job_status, j.error_code AS job_error_code, j.error_message AS job_error_message,
		i.report_id, i.report_job_id, i.data_version, i.methodology_version, i.engine_version, i.generated_utc,
		i.overall_score, i.risk_level, i.module_scores, i.previous_report_id, i.changed, i.last_changed_utc
	FROM watch_items i LEFT JOIN report_jobs j ON j.id = i.job_id`

// ListWatchItems pages the list's items newest first (created_utc DESC,
// id DESC), only the changed ones, or the others, when changed is set
// (the changed ones on the partial index watch_items_changed); an unknown
// list is ErrNotFound.
func (s *Store) ListWatchItems(ctx context.Context, accountID, watchlistID string, changed *bool, limit int, cursor string) ([]locrisk.WatchItem, string, error) {
	pg, err := newPage(limit, cursor, ids.WatchItem)
	if err != nil {
		return nil, "", err
	}
	if _, err := getWatchlist(ctx, s.db, accountID, watchlistID); err != nil {
		return nil, "", err
	}
	q, args := watchItemSelect+` WHERE i.watchlist_id = ?`, []any{watchlistID}
	switch {
	case changed == nil:
	case *changed:
		q += ` AND i.changed = 1` // a literal, so that the partial index serves it
	default:
		q += ` AND i.changed = 0`
	}
	// pageQuery's keyset, on the items' own columns (the job's have the
	// same names).
	if !pg.First() {
		q += ` AND (i.created_utc, i.id) < (?, ?)`
		args = append(args, FormatTime(pg.AfterCreated), pg.AfterID)
	}
	q += ` ORDER BY i.created_utc DESC, i.id DESC LIMIT ?`
	args = append(args, pg.Fetch())
	var rows []watchItemRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list watch items: %w", err)
	}
	out, err := sqlrow.Map(rows, watchItemRow.item)
	if err != nil {
		return nil, "", err
	}
	out, next := locrisk.PageRows(pg, out, func(it locrisk.WatchItem) (time.Time, string) { return it.CreatedUTC, it.ID })
	return out, next, nil
}

// RequestRescore plans a re-score of every item of the list, throttled
// (locrisk.RequestRescoreIn).
func (s *Store) RequestRescore(ctx context.Context, accountID, watchlistID string, now time.Time) (locrisk.RescoreRequest, error) {
	now = truncMs(now)
	var rr locrisk.RescoreRequest
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		rr, err = locrisk.RequestRescoreIn(ctx, txOps{tx}, accountID, watchlistID, ids.New(ids.RescoreRequest), now)
		return err
	})
	if err != nil {
		return locrisk.RescoreRequest{}, fmt.Errorf("re-score watchlist %s: %w", watchlistID, err)
	}
	return rr, nil
}

// SetRescoreRequested records an on-demand re-score (locrisk.WatchTxOps).
func (t txOps) SetRescoreRequested(ctx context.Context, watchlistID string, now time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE watchlists SET rescore_requested_utc = ? WHERE id = ?`, FormatTime(now), watchlistID)
	return err
}

// PlanListRescores plans a re-score of every item of the list
// (locrisk.WatchTxOps).
func (t txOps) PlanListRescores(ctx context.Context, watchlistID, trigger string, now time.Time) (int, error) {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO watch_rescores (item_id, trigger_key, account_id, planned_utc)
		SELECT id, ?, account_id, ? FROM watch_items WHERE watchlist_id = ?
		ON CONFLICT (item_id, trigger_key) DO NOTHING`, trigger, FormatTime(now), watchlistID)
	if err != nil {
		return 0, fmt.Errorf("plan re-scores: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PlanRescores plans the re-scores of a version change
// (locrisk.RescoreQueue): one INSERT ... SELECT over the items, each
// planned once under the change's trigger (the primary key), and the
// plans not started of other version changes dropped.
func (s *Store) PlanRescores(ctx context.Context, v locrisk.ScoreVersions, now time.Time) (int, error) {
	if !v.Complete() {
		return 0, fmt.Errorf("%w: planning re-scores needs the serving data and methodology versions", locrisk.ErrInvalid)
	}
	trigger := locrisk.RescoreVersionKey(v)
	var planned int64
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM watch_rescores
			WHERE job_id IS NULL AND trigger_key LIKE 'v:%' AND trigger_key <> ?`, trigger); err != nil {
			return fmt.Errorf("drop stale plans: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO watch_rescores (item_id, trigger_key, account_id, planned_utc)
			SELECT i.id, ?1, i.account_id, ?2 FROM watch_items i
			WHERE (i.data_version IS NOT ?3 OR i.methodology_version IS NOT ?4)
			  AND NOT EXISTS (SELECT 1 FROM report_jobs j WHERE j.id = i.job_id AND j.status IN ('queued', 'processing'))
			  AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = i.account_id AND a.disabled_utc IS NOT NULL)
			ON CONFLICT (item_id, trigger_key) DO NOTHING`, trigger, FormatTime(truncMs(now)), v.Data, v.Methodology)
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		planned, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("plan re-scores: %w", err)
	}
	return int(planned), nil
}

// ClaimRescore starts the next planned re-score (locrisk.ClaimRescoreIn).
// Like ClaimJob it looks before it takes the write lock, so an idle lane
// costs a read.
func (s *Store) ClaimRescore(ctx context.Context, owner string, v locrisk.ScoreVersions, lease time.Duration, now time.Time) (locrisk.Job, bool, error) {
	if err := locrisk.CheckRescoreClaim(owner, lease, v); err != nil {
		return locrisk.Job{}, false, err
	}
	var pending bool
	if err := s.db.GetContext(ctx, &pending, `SELECT EXISTS (SELECT 1 FROM watch_rescores WHERE job_id IS NULL)`); err != nil {
		return locrisk.Job{}, false, fmt.Errorf("claim re-score: %w", err)
	}
	if !pending {
		return locrisk.Job{}, false, nil
	}
	now = truncMs(now)
	var job locrisk.Job
	var ok bool
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var err error
		job, ok, err = locrisk.ClaimRescoreIn(ctx, txOps{tx}, newIDs{}.JobID, owner, v, lease, now)
		return err
	})
	if err != nil {
		return locrisk.Job{}, false, fmt.Errorf("claim re-score: %w", err)
	}
	return job, ok, nil
}

// rescoreRow is a planned re-score with its item, as NextRescore reads it.
type rescoreRow struct {
	watchItemRow
	Trigger    string `db:"trigger_key"`
	PlannedUTC string `db:"planned_utc"`
	JobOpen    bool   `db:"job_open"`
}

// NextRescore reads the oldest planned re-score the claimer may take
// (locrisk.RescoreClaimOps): an on-demand request's, or its own version
// change's. The write transaction is SQLite's alone, so nothing else
// holds one.
func (t txOps) NextRescore(ctx context.Context, v locrisk.ScoreVersions) (locrisk.RescoreCandidate, bool, error) {
	var r rescoreRow
	err := t.tx.GetContext(ctx, &r, `SELECT i.id, i.watchlist_id, i.account_id, i.external_id, i.latitude, i.longitude,
			i.created_utc, i.job_id, i.report_id, i.data_version, i.methodology_version, i.engine_version, i.generated_utc,
			r.trigger_key, r.planned_utc,
			EXISTS (SELECT 1 FROM report_jobs j WHERE j.id = i.job_id AND j.status IN ('queued', 'processing')) AS job_open
		FROM watch_rescores r INDEXED BY watch_rescores_pending JOIN watch_items i ON i.id = r.item_id
		WHERE r.job_id IS NULL AND (r.trigger_key = ? OR r.trigger_key LIKE 'r:%')
		ORDER BY r.planned_utc, r.item_id LIMIT 1`, locrisk.RescoreVersionKey(v))
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.RescoreCandidate{}, false, nil
	}
	if err != nil {
		return locrisk.RescoreCandidate{}, false, err
	}
	it, err := r.item()
	if err != nil {
		return locrisk.RescoreCandidate{}, false, err
	}
	planned, err := ParseTime(r.PlannedUTC)
	if err != nil {
		return locrisk.RescoreCandidate{}, false, err
	}
	c := locrisk.RescoreCandidate{Item: it, Trigger: r.Trigger, LatestJobOpen: r.JobOpen, PlannedUTC: planned}
	if it.Current != nil {
		c.CurrentVersions = &it.Current.Versions
	}
	return c, true, nil
}

// DropRescore deletes a planned re-score (locrisk.RescoreClaimOps).
func (t txOps) DropRescore(ctx context.Context, c locrisk.RescoreCandidate) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM watch_rescores WHERE item_id = ? AND trigger_key = ?`, c.Item.ID, c.Trigger)
	return err
}

// StartRescore writes the re-score's job, processing under owner's lease,
// and records it on the plan and the item (locrisk.RescoreClaimOps).
func (t txOps) StartRescore(ctx context.Context, c locrisk.RescoreCandidate, job locrisk.Job, owner string, leaseExpires time.Time) error {
	if err := insertWatchJob(ctx, t.tx, job, owner, leaseExpires); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE watch_rescores SET job_id = ? WHERE item_id = ? AND trigger_key = ?`,
		job.ID, c.Item.ID, c.Trigger); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE watch_items SET job_id = ? WHERE id = ?`, job.ID, c.Item.ID)
	return err
}

// RescoreBacklog counts the lane's plans (locrisk.RescoreQueue).
func (s *Store) RescoreBacklog(ctx context.Context) (locrisk.RescoreBacklog, error) {
	var r struct {
		PendingVersion   int            `db:"pending_version"`
		PendingRequested int            `db:"pending_requested"`
		Started          int            `db:"started"`
		Oldest           sql.NullString `db:"oldest"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT
			COALESCE(SUM(job_id IS NULL AND trigger_key LIKE 'v:%'), 0) AS pending_version,
			COALESCE(SUM(job_id IS NULL AND trigger_key LIKE 'r:%'), 0) AS pending_requested,
			COALESCE(SUM(job_id IS NOT NULL), 0) AS started,
			MIN(CASE WHEN job_id IS NULL THEN planned_utc END) AS oldest
		FROM watch_rescores`)
	if err != nil {
		return locrisk.RescoreBacklog{}, fmt.Errorf("re-score backlog: %w", err)
	}
	b := locrisk.RescoreBacklog{PendingVersion: r.PendingVersion, PendingRequested: r.PendingRequested, Started: r.Started}
	if b.Oldest, err = parseNullTime(r.Oldest); err != nil {
		return locrisk.RescoreBacklog{}, err
	}
	return b, nil
}

// insertWatchJob writes a job of a watch item: a first job (queued, no
// owner) or a re-score (processing under owner's lease until
// leaseExpires). Other jobs are written without the watch_item_id column
// (jobcreate.go).
func insertWatchJob(ctx context.Context, tx *sqlx.Tx, j locrisk.Job, owner string, leaseExpires time.Time) error {
	var lo, le sql.NullString
	if owner != "" {
		lo, le = sql.NullString{String: owner, Valid: true}, sql.NullString{String: FormatTime(leaseExpires), Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, attempts,
			run_after_utc, lease_owner, lease_expires_utc, created_utc, updated_utc, watch_item_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, j.ID, j.AccountID, j.Bucket, j.Latitude, j.Longitude,
		j.Status, j.Attempts, FormatTime(j.RunAfterUTC), lo, le, FormatTime(j.CreatedUTC),
		FormatTime(j.UpdatedUTC), nullString(j.WatchItemID)); err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

// finalOps are the steps of a job's final transition (locrisk.FinalTxOps):
// txOps's, and reading a stored report, which needs the store's codec.
type finalOps struct {
	txOps
	s *Store
}

// LockWatchItem reads the item with its list's minScoreChange; the write
// transaction is SQLite's alone (locrisk.FinalTxOps).
func (t txOps) LockWatchItem(ctx context.Context, itemID string) (locrisk.WatchItemState, bool, error) {
	var r watchItemRow
	err := t.tx.GetContext(ctx, &r, `SELECT i.id, i.watchlist_id, i.account_id, i.external_id, i.latitude, i.longitude,
			i.created_utc, i.job_id, i.report_id, i.report_job_id, i.data_version, i.methodology_version, i.engine_version,
			i.generated_utc, i.overall_score, i.risk_level, i.module_scores, i.previous_report_id, i.changed,
			i.last_changed_utc, w.min_score_change
		FROM watch_items i JOIN watchlists w ON w.id = i.watchlist_id WHERE i.id = ?`, itemID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.WatchItemState{}, false, nil
	}
	if err != nil {
		return locrisk.WatchItemState{}, false, err
	}
	c, g, l, err := r.times()
	if err != nil {
		return locrisk.WatchItemState{}, false, fmt.Errorf("watch item %s: %w", r.ID, err)
	}
	return r.State(c, g, l), true, nil
}

// UpdateWatchItem stores the item's reports and change state
// (locrisk.FinalTxOps).
func (t txOps) UpdateWatchItem(ctx context.Context, st locrisk.WatchItemState) error {
	var reportID, jobID, data, meth, eng, generated sql.NullString
	if c := st.Current; c != nil {
		reportID, jobID = sql.NullString{String: c.ReportID, Valid: true}, sql.NullString{String: c.JobID, Valid: true}
		data = sql.NullString{String: c.Versions.Data, Valid: c.Versions.Data != ""}
		meth = sql.NullString{String: c.Versions.Methodology, Valid: c.Versions.Methodology != ""}
		eng = sql.NullString{String: c.Versions.Engine, Valid: c.Versions.Engine != ""}
		generated = sql.NullString{String: FormatTime(c.GeneratedUTC), Valid: true}
	}
	overall, level, modules, err := st.Current.StoredScores()
	if err != nil {
		return err
	}
	var lastChanged sql.NullString
	if st.LastChangedUTC != nil {
		lastChanged = sql.NullString{String: FormatTime(*st.LastChangedUTC), Valid: true}
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE watch_items SET report_id = ?, report_job_id = ?, data_version = ?,
			methodology_version = ?, engine_version = ?, generated_utc = ?, overall_score = ?, risk_level = ?,
			module_scores = ?, previous_report_id = ?, changed = ?, last_changed_utc = ?
		WHERE id = ?`, reportID, jobID, data, meth, eng, generated, overall, level, modules,
		nullString(st.PreviousReportID), st.Changed, lastChanged, st.ID)
	return err
}

// MarkWatchItemChanged records a material change (locrisk.Tx).
func (t txOps) MarkWatchItemChanged(ctx context.Context, itemID string, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE watch_items SET changed = 1, last_changed_utc = ? WHERE id = ?`,
		FormatTime(truncMs(at)), itemID)
	return err
}

// ReadReport reads a stored report with its body decoded (locrisk.Tx).
func (f finalOps) ReadReport(ctx context.Context, reportID string) (locrisk.Report, error) {
	var r reportRow
	err := f.tx.GetContext(ctx, &r, `SELECT id, job_id, account_id, generated_utc, data_version, body, body_codec
		FROM reports WHERE id = ?`, reportID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Report{}, fmt.Errorf("report %s: %w", reportID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Report{}, fmt.Errorf("read report %s: %w", reportID, err)
	}
	return f.s.reportOf(r)
}
