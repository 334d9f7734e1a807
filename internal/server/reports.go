package server

import (
	"errors"
	"net/http"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/reportdiff"
	"github.com/locrisk/locrisk/internal/view"
)

// reportIDParam is the {reportId} of the path as a lowercase UUID. Report
// ids are issued in lowercase; an uppercase spelling of the same UUID is
// accepted and normalised, as RFC 9562 says UUIDs compare case-insensitively.
// Other forms (braces, urn:uuid:, no hyphens) are 400 invalid_report_id.
func reportIDParam(r *http.Request) (string, error) {
	id, ok := canonicalUUID(r.PathValue("reportId"))
	if !ok {
		return "", errorf(codeInvalidReportID, "reportId must be a UUID such as 123e4567-e89b-12d3-a456-426614174000")
	}
	return id, nil
}

func canonicalUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c + ('a' - 'A')
		default:
			return "", false
		}
	}
	return string(b), true
}

// getReport is GET /location-risk/reports/{reportId} (docs/api.md, Reports).
// The 400s (report id, then detail) come before the 404, as the check order
// of docs/api.md (Authentication, scopes and check order) says.
// The body is view.NewReport of the stored report, signed
// (view.SignedReport; docs/verification.md).
func (s *Server) getReport(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := reportIDParam(r)
	if err != nil {
		return err
	}
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	detail := view.DetailSummary
	if vs, ok := q["detail"]; ok {
		detail = vs[0]
		if detail != view.DetailSummary && detail != view.DetailFull {
			return errorf(codeInvalidDetail, "detail must be summary or full")
		}
	}
	rep, err := s.store.GetReport(r.Context(), p.account.ID, id)
	if err != nil {
		return storeError(err, codeReportNotFound, s.now())
	}
	doc, err := view.SignedReport(r.Context(), rep, detail, s.signer)
	if err != nil {
		return err
	}
	writeJSONBytes(w, http.StatusOK, doc)
	return nil
}

// getReportChanges is GET /location-risk/reports/{reportId}/changes
// (docs/api.md, Report changes): the comparison of the report since with
// the report of the path, both the account's. The 400s come first (the
// path's id, since, minScoreChange), then the 404s (the path's report,
// then since's, each answered as operation 5 answers it), then the 422 for
// reports of two coordinates.
func (s *Server) getReportChanges(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := reportIDParam(r)
	if err != nil {
		return err
	}
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	vs, ok := q["since"]
	if !ok {
		return errorf(codeInvalidSince, "since is required: the id of the report to compare this one with")
	}
	since, ok := canonicalUUID(vs[0])
	if !ok {
		return errorf(codeInvalidSince, "since must be a report id, a UUID such as 123e4567-e89b-12d3-a456-426614174000")
	}
	minChange := view.DefaultMinScoreChange
	if vs, ok := q["minScoreChange"]; ok {
		if minChange, ok = parseBoundedInt(vs[0], 1, 100); !ok {
			return errorf(codeInvalidMinScoreChange, "minScoreChange must be an integer from 1 to 100")
		}
	}
	current, err := s.store.GetReport(r.Context(), p.account.ID, id)
	if err != nil {
		return storeError(err, codeReportNotFound, s.now())
	}
	previous, err := s.store.GetReport(r.Context(), p.account.ID, since)
	if err != nil {
		if errors.Is(err, locrisk.ErrNotFound) {
			return errorf(codeReportNotFound, "since: no report with this id exists for this account")
		}
		return storeError(err, codeReportNotFound, s.now())
	}
	v, err := view.NewReportChanges(previous, current, minChange)
	if errors.Is(err, reportdiff.ErrDifferentCoordinates) {
		return errorf(codeCoordinateMismatch, "the report since is of another coordinate than this one; only reports of one coordinate compare")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// getSigningKeys is GET /.well-known/locrisk-signing-keys (docs/api.md,
// Signing keys; docs/verification.md): the public keys, unauthenticated.
func (s *Server) getSigningKeys(w http.ResponseWriter, r *http.Request) {
	keys, err := s.signer.PublicKeys(r.Context())
	if err == nil && len(keys) == 0 {
		// A server that has not signed yet publishes the key it will sign
		// with, so that a verifier can fetch the keys before any report.
		if _, _, err = s.signer.Key(r.Context()); err == nil {
			keys, err = s.signer.PublicKeys(r.Context())
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := view.NewSigningKeys(keys)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
