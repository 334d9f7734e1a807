package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

type reportRow struct {
	ID           string `db:"id"`
	JobID        string `db:"job_id"`
	AccountID    string `db:"account_id"`
	GeneratedUTC string `db:"generated_utc"`
	DataVersion  string `db:"data_version"`
	Body         string `db:"body"`
}

func insertReport(ctx context.Context, tx *sqlx.Tx, r Report) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO reports (id, job_id, account_id, generated_utc, data_version, body)
		VALUES (?, ?, ?, ?, ?, ?)`, r.ID, r.JobID, r.AccountID, FormatTime(r.GeneratedUTC), r.DataVersion, string(r.Body))
	if err != nil {
		return fmt.Errorf("insert report: %w", err)
	}
	return nil
}

// GetReport returns the account's report; an unknown report or another
// account's is ErrNotFound.
func (s *Store) GetReport(ctx context.Context, accountID, reportID string) (Report, error) {
	var r reportRow
	err := s.db.GetContext(ctx, &r, `SELECT id, job_id, account_id, generated_utc, data_version, body
		FROM reports WHERE id = ? AND account_id = ?`, reportID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return Report{}, fmt.Errorf("report %s: %w", reportID, ErrNotFound)
	}
	if err != nil {
		return Report{}, fmt.Errorf("get report %s: %w", reportID, err)
	}
	t, err := ParseTime(r.GeneratedUTC)
	if err != nil {
		return Report{}, fmt.Errorf("report %s: %w", reportID, err)
	}
	return Report{ID: r.ID, JobID: r.JobID, AccountID: r.AccountID, GeneratedUTC: t, DataVersion: r.DataVersion, Body: []byte(r.Body)}, nil
}
