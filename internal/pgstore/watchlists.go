package pgstore

// Watchlists and their items (docs/api.md, Watchlists), the re-score lane
// (PlanRescores, ClaimRescore) and the steps of a watch job's final
// transition (finalOps): the SQLite store's operations (its
// watchlists.go) on PostgreSQL, with the rules in the root package. What
// holds across nodes: a list's row is locked (FOR UPDATE) by every change
// of its items, so its item count and the room and quota checks cannot
// race; a version change's re-score of an item is planned once by the
// plans' primary key, whichever nodes plan it, and started once, as a
// claim locks the plan FOR UPDATE SKIP LOCKED and marks it in the
// transaction that makes its job; a job's final transition locks its item
// (FOR UPDATE), so two jobs of one item move its reports on one after the
// other. Locks are taken plans before items, in every transaction that
// takes both, so that none waits for the other in a circle.

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
	now = ms(now)
	var w locrisk.Watchlist
	var items []locrisk.WatchItem
	err = s.withTx(ctx, func(tx *sqlx.Tx) error {
		if err := lockAccounts(ctx, tx, []string{nw.AccountID}); err != nil {
			return err
		}
		if _, err := getAccount(ctx, tx, nw.AccountID); err != nil {
			return err
		}
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
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO watchlists (id, account_id, name, min_score_change, item_count, created_utc)
		VALUES ($1, $2, $3, $4, 0, $5)`, w.ID, w.AccountID, w.Name, w.MinScoreChange, w.CreatedUTC); err != nil {
		return fmt.Errorf("insert watchlist: %w", err)
	}
	return nil
}

// LockWatchlist locks the account's list and reads it (locrisk.WatchTxOps).
func (t txOps) LockWatchlist(ctx context.Context, accountID, watchlistID string) (locrisk.Watchlist, error) {
	var id string
	err := t.tx.GetContext(ctx, &id, `SELECT id FROM watchlists WHERE id = $1 AND account_id = $2 FOR UPDATE`, watchlistID, accountID)
	if err := sqlrow.Got(err, "watchlist "+watchlistID); err != nil {
		return locrisk.Watchlist{}, err
	}
	return getWatchlist(ctx, t.tx, accountID, watchlistID)
}

// InsertWatchItems writes the items and their first jobs and counts them
// on the list (locrisk.WatchTxOps).
func (t txOps) InsertWatchItems(ctx context.Context, w locrisk.Watchlist, items []locrisk.WatchItem, jobs []locrisk.Job) error {
	for i, it := range items {
		if err := insertWatchJob(ctx, t.tx, jobs[i], "", time.Time{}); err != nil {
			return err
		}
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO watch_items
			(id, watchlist_id, account_id, external_id, latitude, longitude, created_utc, job_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, it.ID, w.ID, it.AccountID, it.ExternalID, it.Latitude, it.Longitude,
			it.CreatedUTC, jobs[i].ID); err != nil {
			return fmt.Errorf("insert watch item %d: %w", i+1, err)
		}
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE watchlists SET item_count = item_count + $1 WHERE id = $2`, len(items), w.ID); err != nil {
		return fmt.Errorf("count watch items: %w", err)
	}
	return nil
}

// insertWatchJob writes a job of a watch item: a first job (queued, no
// owner) or a re-score (processing under owner's lease).
func insertWatchJob(ctx context.Context, tx *sqlx.Tx, j locrisk.Job, owner string, leaseExpires time.Time) error {
	var lo sql.NullString
	var le sql.NullTime
	if owner != "" {
		lo, le = sql.NullString{String: owner, Valid: true}, sql.NullTime{Time: leaseExpires, Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO report_jobs (id, account_id, bucket, latitude, longitude, status, attempts,
			run_after_utc, lease_owner, lease_expires_utc, created_utc, updated_utc, watch_item_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, j.ID, j.AccountID, j.Bucket, j.Latitude, j.Longitude,
		j.Status, j.Attempts, j.RunAfterUTC, lo, le, j.CreatedUTC, j.UpdatedUTC, j.WatchItemID); err != nil {
		return fmt.Errorf("insert job: %w", err)
	}
	return nil
}

// watchlistRow is a watchlists row with its count of changed items.
type watchlistRow struct {
	ID                  string       `db:"id"`
	AccountID           string       `db:"account_id"`
	Name                string       `db:"name"`
	MinScoreChange      int          `db:"min_score_change"`
	ItemCount           int          `db:"item_count"`
	ChangedCount        int          `db:"changed_count"`
	CreatedUTC          time.Time    `db:"created_utc"`
	RescoreRequestedUTC sql.NullTime `db:"rescore_requested_utc"`
}

const watchlistColumns = `id, account_id, name, min_score_change, item_count, created_utc, rescore_requested_utc,
	(SELECT COUNT(*) FROM watch_items i WHERE i.watchlist_id = watchlists.id AND i.changed) AS changed_count`

func (r watchlistRow) watchlist() locrisk.Watchlist {
	return locrisk.Watchlist{ID: r.ID, AccountID: r.AccountID, Name: r.Name, MinScoreChange: r.MinScoreChange,
		ItemCount: r.ItemCount, ChangedCount: r.ChangedCount, CreatedUTC: utc(r.CreatedUTC),
		RescoreRequestedUTC: utcPtr(r.RescoreRequestedUTC)}
}

func getWatchlist(ctx context.Context, q queryer, accountID, watchlistID string) (locrisk.Watchlist, error) {
	var r watchlistRow
	err := q.GetContext(ctx, &r, `SELECT `+watchlistColumns+` FROM watchlists WHERE id = $1 AND account_id = $2`, watchlistID, accountID)
	if err := sqlrow.Got(err, "watchlist "+watchlistID); err != nil {
		return locrisk.Watchlist{}, err
	}
	return r.watchlist(), nil
}

// GetWatchlist returns the account's list.
func (s *Store) GetWatchlist(ctx context.Context, accountID, watchlistID string) (locrisk.Watchlist, error) {
	return getWatchlist(ctx, s.db, accountID, watchlistID)
}

// ListWatchlists pages the account's lists newest first.
func (s *Store) ListWatchlists(ctx context.Context, accountID string, limit int, cursor string) ([]locrisk.Watchlist, string, error) {
	pg, err := newPage(limit, cursor, ids.Watchlist)
	if err != nil {
		return nil, "", err
	}
	q, args := pageQuery(pg, `SELECT `+watchlistColumns+` FROM watchlists WHERE account_id = $1`, []any{accountID}, "", "")
	var rows []watchlistRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list watchlists: %w", err)
	}
	out := make([]locrisk.Watchlist, len(rows))
	for i, r := range rows {
		out[i] = r.watchlist()
	}
	out, next := locrisk.PageRows(pg, out, func(w locrisk.Watchlist) (time.Time, string) { return w.CreatedUTC, w.ID })
	return out, next, nil
}

// DeleteWatchlist deletes the list, its plans and items in one
// transaction, under the list's lock.
func (s *Store) DeleteWatchlist(ctx context.Context, accountID, watchlistID string) error {
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := (txOps{tx}).LockWatchlist(ctx, accountID, watchlistID); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM watch_rescores WHERE item_id IN (SELECT id FROM watch_items WHERE watchlist_id = $1)`,
			`DELETE FROM watch_items WHERE watchlist_id = $1`,
			`DELETE FROM watchlists WHERE id = $1`,
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

// AddWatchItems adds items with their first jobs in one transaction
// (locrisk.AddWatchItemsIn).
func (s *Store) AddWatchItems(ctx context.Context, accountID, watchlistID string, items []locrisk.NewWatchItem, now time.Time) ([]locrisk.WatchItem, error) {
	if err := locrisk.CheckWatchItems(items, false); err != nil {
		return nil, err
	}
	now = ms(now)
	var out []locrisk.WatchItem
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		if err := lockAccounts(ctx, tx, []string{accountID}); err != nil {
			return err
		}
		var err error
		out, err = locrisk.AddWatchItemsIn(ctx, txOps{tx}, newIDs{}, accountID, watchlistID, items, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("add watch items: %w", err)
	}
	return out, nil
}

// RemoveWatchItems removes the list's items of these ids with their plans
// (plans first: the lock order), and uncounts them.
func (s *Store) RemoveWatchItems(ctx context.Context, accountID, watchlistID string, itemIDs []string) ([]string, error) {
	removed := []string{}
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		removed = removed[:0]
		if _, err := (txOps{tx}).LockWatchlist(ctx, accountID, watchlistID); err != nil {
			return err
		}
		for _, id := range itemIDs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM watch_rescores r USING watch_items i
				WHERE r.item_id = i.id AND i.id = $1 AND i.watchlist_id = $2`, id, watchlistID); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM watch_items WHERE id = $1 AND watchlist_id = $2`, id, watchlistID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				removed = append(removed, id)
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE watchlists SET item_count = item_count - $1 WHERE id = $2`, len(removed), watchlistID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("remove watch items: %w", err)
	}
	return removed, nil
}

// watchItemRow is a watch item as watchItemSelect reads it.
type watchItemRow struct {
	locrisk.WatchItemRecord
	CreatedUTC     time.Time    `db:"created_utc"`
	GeneratedUTC   sql.NullTime `db:"generated_utc"`
	LastChangedUTC sql.NullTime `db:"last_changed_utc"`
}

func (r watchItemRow) item() locrisk.WatchItem {
	return r.Item(utc(r.CreatedUTC), utcPtr(r.GeneratedUTC), utcPtr(r.LastChangedUTC))
}

const watchItemSelect = `SELECT i.id, i.watchlist_id, i.account_id, i.external_id, i.latitude, i.longitude, i.created_utc,
		i.job_id, j.status AS job_status, j.error_code AS job_error_code, j.error_message AS job_error_message,
		i.report_id, i.report_job_id, i.data_version, i.methodology_version, i.engine_version, i.generated_utc,
		i.overall_score, i.risk_level, i.module_scores, i.previous_report_id, i.changed, i.last_changed_utc
	FROM watch_items i LEFT JOIN report_jobs j ON j.id = i.job_id`

// ListWatchItems pages the list's items newest first, only the changed
// ones, or the others, when changed is set.
func (s *Store) ListWatchItems(ctx context.Context, accountID, watchlistID string, changed *bool, limit int, cursor string) ([]locrisk.WatchItem, string, error) {
	pg, err := newPage(limit, cursor, ids.WatchItem)
	if err != nil {
		return nil, "", err
	}
	if _, err := getWatchlist(ctx, s.db, accountID, watchlistID); err != nil {
		return nil, "", err
	}
	q, args := watchItemSelect+` WHERE i.watchlist_id = $1`, []any{watchlistID}
	if changed != nil {
		args = append(args, *changed)
		q += fmt.Sprintf(` AND i.changed = $%d`, len(args))
	}
	q, args = pageQuery(pg, q, args, "i.", "")
	var rows []watchItemRow
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, "", fmt.Errorf("list watch items: %w", err)
	}
	out := make([]locrisk.WatchItem, len(rows))
	for i, r := range rows {
		out[i] = r.item()
	}
	out, next := locrisk.PageRows(pg, out, func(it locrisk.WatchItem) (time.Time, string) { return it.CreatedUTC, it.ID })
	return out, next, nil
}

// RequestRescore plans a re-score of every item of the list, throttled
// (locrisk.RequestRescoreIn).
func (s *Store) RequestRescore(ctx context.Context, accountID, watchlistID string, now time.Time) (locrisk.RescoreRequest, error) {
	now = ms(now)
	var rr locrisk.RescoreRequest
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
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
	_, err := t.tx.ExecContext(ctx, `UPDATE watchlists SET rescore_requested_utc = $1 WHERE id = $2`, now, watchlistID)
	return err
}

// PlanListRescores plans a re-score of every item of the list
// (locrisk.WatchTxOps).
func (t txOps) PlanListRescores(ctx context.Context, watchlistID, trigger string, now time.Time) (int, error) {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO watch_rescores (item_id, trigger_key, account_id, planned_utc)
		SELECT id, $1, account_id, $2 FROM watch_items WHERE watchlist_id = $3
		ON CONFLICT (item_id, trigger_key) DO NOTHING`, trigger, now, watchlistID)
	if err != nil {
		return 0, fmt.Errorf("plan re-scores: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PlanRescores plans the re-scores of a version change
// (locrisk.RescoreQueue): an item is planned once under the change's
// trigger (the primary key) however many nodes run this together.
func (s *Store) PlanRescores(ctx context.Context, v locrisk.ScoreVersions, now time.Time) (int, error) {
	if !v.Complete() {
		return 0, fmt.Errorf("%w: planning re-scores needs the serving data and methodology versions", locrisk.ErrInvalid)
	}
	trigger := locrisk.RescoreVersionKey(v)
	var planned int64
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM watch_rescores
			WHERE job_id IS NULL AND trigger_key LIKE 'v:%' AND trigger_key <> $1`, trigger); err != nil {
			return fmt.Errorf("drop stale plans: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO watch_rescores (item_id, trigger_key, account_id, planned_utc)
			SELECT i.id, $1, i.account_id, $2 FROM watch_items i
			WHERE (i.data_version IS DISTINCT FROM $3 OR i.methodology_version IS DISTINCT FROM $4)
			  AND NOT EXISTS (SELECT 1 FROM report_jobs j WHERE j.id = i.job_id AND j.status IN ('queued', 'processing'))
			  AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = i.account_id AND a.disabled_utc IS NOT NULL)
			ON CONFLICT (item_id, trigger_key) DO NOTHING`, trigger, ms(now), v.Data, v.Methodology)
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

// ClaimRescore starts the next planned re-score (locrisk.ClaimRescoreIn),
// looking first with a read, as an idle lane polls.
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
	now = ms(now)
	var job locrisk.Job
	var ok bool
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		job, ok, err = locrisk.ClaimRescoreIn(ctx, txOps{tx}, newIDs{}.JobID, owner, v, lease, now)
		return err
	})
	if err != nil {
		return locrisk.Job{}, false, fmt.Errorf("claim re-score: %w", err)
	}
	return job, ok, nil
}

// rescoreRow is a planned re-score with its item.
type rescoreRow struct {
	watchItemRow
	Trigger    string    `db:"trigger_key"`
	PlannedUTC time.Time `db:"planned_utc"`
	JobOpen    bool      `db:"job_open"`
}

// NextRescore locks the oldest planned re-score the claimer may take,
// skipping those other claimers hold (locrisk.RescoreClaimOps).
func (t txOps) NextRescore(ctx context.Context, v locrisk.ScoreVersions) (locrisk.RescoreCandidate, bool, error) {
	var r rescoreRow
	err := t.tx.GetContext(ctx, &r, `SELECT i.id, i.watchlist_id, i.account_id, i.external_id, i.latitude, i.longitude,
			i.created_utc, i.job_id, i.report_id, i.data_version, i.methodology_version, i.engine_version, i.generated_utc,
			r.trigger_key, r.planned_utc,
			EXISTS (SELECT 1 FROM report_jobs j WHERE j.id = i.job_id AND j.status IN ('queued', 'processing')) AS job_open
		FROM watch_rescores r JOIN watch_items i ON i.id = r.item_id
		WHERE r.job_id IS NULL AND (r.trigger_key = $1 OR r.trigger_key LIKE 'r:%')
		ORDER BY r.planned_utc, r.item_id LIMIT 1 FOR UPDATE OF r SKIP LOCKED`, locrisk.RescoreVersionKey(v))
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.RescoreCandidate{}, false, nil
	}
	if err != nil {
		return locrisk.RescoreCandidate{}, false, err
	}
	it := r.item()
	c := locrisk.RescoreCandidate{Item: it, Trigger: r.Trigger, LatestJobOpen: r.JobOpen, PlannedUTC: utc(r.PlannedUTC)}
	if it.Current != nil {
		c.CurrentVersions = &it.Current.Versions
	}
	return c, true, nil
}

// DropRescore deletes a planned re-score (locrisk.RescoreClaimOps).
func (t txOps) DropRescore(ctx context.Context, c locrisk.RescoreCandidate) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM watch_rescores WHERE item_id = $1 AND trigger_key = $2`, c.Item.ID, c.Trigger)
	return err
}

// StartRescore writes the re-score's job under owner's lease and records
// it on the plan and the item (locrisk.RescoreClaimOps).
func (t txOps) StartRescore(ctx context.Context, c locrisk.RescoreCandidate, job locrisk.Job, owner string, leaseExpires time.Time) error {
	if err := insertWatchJob(ctx, t.tx, job, owner, ms(leaseExpires)); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE watch_rescores SET job_id = $1 WHERE item_id = $2 AND trigger_key = $3`,
		job.ID, c.Item.ID, c.Trigger); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE watch_items SET job_id = $1 WHERE id = $2`, job.ID, c.Item.ID)
	return err
}

// RescoreBacklog counts the lane's plans (locrisk.RescoreQueue).
func (s *Store) RescoreBacklog(ctx context.Context) (locrisk.RescoreBacklog, error) {
	var r struct {
		PendingVersion   int          `db:"pending_version"`
		PendingRequested int          `db:"pending_requested"`
		Started          int          `db:"started"`
		Oldest           sql.NullTime `db:"oldest"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT
			COUNT(*) FILTER (WHERE job_id IS NULL AND trigger_key LIKE 'v:%') AS pending_version,
			COUNT(*) FILTER (WHERE job_id IS NULL AND trigger_key LIKE 'r:%') AS pending_requested,
			COUNT(*) FILTER (WHERE job_id IS NOT NULL) AS started,
			MIN(planned_utc) FILTER (WHERE job_id IS NULL) AS oldest
		FROM watch_rescores`)
	if err != nil {
		return locrisk.RescoreBacklog{}, fmt.Errorf("re-score backlog: %w", err)
	}
	return locrisk.RescoreBacklog{PendingVersion: r.PendingVersion, PendingRequested: r.PendingRequested,
		Started: r.Started, Oldest: utcPtr(r.Oldest)}, nil
}

// finalOps are the steps of a job's final transition (locrisk.FinalTxOps):
// txOps's, and reading a stored report, which needs the store's codec.
type finalOps struct {
	txOps
	s *Store
}

// LockWatchItem locks the item and reads it with its list's
// minScoreChange (locrisk.FinalTxOps).
func (t txOps) LockWatchItem(ctx context.Context, itemID string) (locrisk.WatchItemState, bool, error) {
	var r watchItemRow
	err := t.tx.GetContext(ctx, &r, `SELECT i.id, i.watchlist_id, i.account_id, i.external_id, i.latitude, i.longitude,
			i.created_utc, i.job_id, i.report_id, i.report_job_id, i.data_version, i.methodology_version, i.engine_version,
			i.generated_utc, i.overall_score, i.risk_level, i.module_scores, i.previous_report_id, i.changed,
			i.last_changed_utc, w.min_score_change
		FROM watch_items i JOIN watchlists w ON w.id = i.watchlist_id WHERE i.id = $1 FOR UPDATE OF i`, itemID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.WatchItemState{}, false, nil
	}
	if err != nil {
		return locrisk.WatchItemState{}, false, err
	}
	return r.State(utc(r.CreatedUTC), utcPtr(r.GeneratedUTC), utcPtr(r.LastChangedUTC)), true, nil
}

// UpdateWatchItem stores the item's reports and change state
// (locrisk.FinalTxOps).
func (t txOps) UpdateWatchItem(ctx context.Context, st locrisk.WatchItemState) error {
	var reportID, jobID, data, meth, eng sql.NullString
	var generated sql.NullTime
	if c := st.Current; c != nil {
		reportID, jobID = sql.NullString{String: c.ReportID, Valid: true}, sql.NullString{String: c.JobID, Valid: true}
		data = sql.NullString{String: c.Versions.Data, Valid: c.Versions.Data != ""}
		meth = sql.NullString{String: c.Versions.Methodology, Valid: c.Versions.Methodology != ""}
		eng = sql.NullString{String: c.Versions.Engine, Valid: c.Versions.Engine != ""}
		generated = sql.NullTime{Time: ms(c.GeneratedUTC), Valid: true}
	}
	overall, level, modules, err := st.Current.StoredScores()
	if err != nil {
		return err
	}
	var lastChanged sql.NullTime
	if st.LastChangedUTC != nil {
		lastChanged = sql.NullTime{Time: ms(*st.LastChangedUTC), Valid: true}
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE watch_items SET report_id = $1, report_job_id = $2, data_version = $3,
			methodology_version = $4, engine_version = $5, generated_utc = $6, overall_score = $7, risk_level = $8,
			module_scores = $9, previous_report_id = $10, changed = $11, last_changed_utc = $12
		WHERE id = $13`, reportID, jobID, data, meth, eng, generated, overall, level, modules,
		st.PreviousReportID, st.Changed, lastChanged, st.ID)
	return err
}

// MarkWatchItemChanged records a material change (locrisk.Tx).
func (t txOps) MarkWatchItemChanged(ctx context.Context, itemID string, at time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE watch_items SET changed = true, last_changed_utc = $1 WHERE id = $2`, ms(at), itemID)
	return err
}

// ReadReport reads a stored report with its body decoded (locrisk.Tx).
func (f finalOps) ReadReport(ctx context.Context, reportID string) (locrisk.Report, error) {
	return f.s.readReport(ctx, f.tx, `id = $1`, reportID)
}
