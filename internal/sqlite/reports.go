package sqlite

// Reports: written once, with the job's completion (jobqueue.go), and read
// by id. A body is stored compressed (internal/reportcodec; body_codec
// names how, NULL for the plain JSON of the bodies written before
// migration 13) and its summary scores beside it, in columns an operator
// can read in the sqlite3 shell (docs/operations.md, The database).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

type reportRow struct {
	ID           string         `db:"id"`
	JobID        string         `db:"job_id"`
	AccountID    string         `db:"account_id"`
	GeneratedUTC string         `db:"generated_utc"`
	DataVersion  string         `db:"data_version"`
	Body         []byte         `db:"body"`
	BodyCodec    sql.NullString `db:"body_codec"`
}

// storedReport is a report as its row holds it: the body encoded, the
// scores in their columns. The encoding is done before the write
// transaction (encodeReport), by the worker that completes the job, so
// that the single writer only copies bytes.
type storedReport struct {
	locrisk.Report
	codec        string
	body         []byte
	overall      sql.NullInt64
	riskLevel    sql.NullString
	moduleScores sql.NullString
}

// encodeReport compresses r's body and lays its scores out for their
// columns.
func (s *Store) encodeReport(r locrisk.Report) (storedReport, error) {
	sr := storedReport{Report: r}
	sr.codec, sr.body = s.codec.Encode(nil, r.Body)
	if sc := r.Scores; sc != nil {
		sr.overall = sql.NullInt64{Int64: int64(sc.Overall), Valid: true}
		sr.riskLevel = sql.NullString{String: sc.RiskLevel, Valid: true}
		m, err := sc.ModulesJSON()
		if err != nil {
			return storedReport{}, err
		}
		sr.moduleScores = sql.NullString{String: m, Valid: true}
	}
	return sr, nil
}

func insertReport(ctx context.Context, tx *sqlx.Tx, r storedReport) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO reports (id, job_id, account_id, generated_utc, data_version, body,
			body_codec, overall_score, risk_level, module_scores)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.JobID, r.AccountID, FormatTime(r.GeneratedUTC), r.DataVersion, r.body,
		r.codec, r.overall, r.riskLevel, r.moduleScores)
	if err != nil {
		return fmt.Errorf("insert report: %w", err)
	}
	return nil
}

// GetReport returns the account's report, its body as it was written; an
// unknown report or another account's is ErrNotFound.
func (s *Store) GetReport(ctx context.Context, accountID, reportID string) (locrisk.Report, error) {
	var r reportRow
	err := s.db.GetContext(ctx, &r, `SELECT id, job_id, account_id, generated_utc, data_version, body, body_codec
		FROM reports WHERE id = ? AND account_id = ?`, reportID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Report{}, fmt.Errorf("report %s: %w", reportID, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Report{}, fmt.Errorf("get report %s: %w", reportID, err)
	}
	return s.reportOf(r)
}

// reportOf is the report r holds, its body decoded.
func (s *Store) reportOf(r reportRow) (locrisk.Report, error) {
	t, err := ParseTime(r.GeneratedUTC)
	if err != nil {
		return locrisk.Report{}, fmt.Errorf("report %s: %w", r.ID, err)
	}
	body, err := s.codec.Decode(r.BodyCodec.String, r.Body)
	if err != nil {
		return locrisk.Report{}, fmt.Errorf("report %s: %w", r.ID, err)
	}
	return locrisk.Report{ID: r.ID, JobID: r.JobID, AccountID: r.AccountID, GeneratedUTC: t, DataVersion: r.DataVersion, Body: body}, nil
}
