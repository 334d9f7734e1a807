package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/view"
)

// Paging of the cursor-paged lists, jobs and webhook endpoints
// (docs/api.md, Report jobs).
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// maxIdempotencyKeyLen is the longest Idempotency-Key accepted.
const maxIdempotencyKeyLen = 255

// createJob is POST /location-risk/report-jobs (docs/api.md, Report jobs).
// Checks run in the order docs/api.md gives (Authentication, scopes and
// check order): the 400s (Idempotency-Key header, then the body), 422
// coverage, then the store's 409 idempotency and 429 quota.
func (s *Server) createJob(w http.ResponseWriter, r *http.Request, p *principal) error {
	idemKey, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	lat, lon, err := decodeCoordinates(w, r)
	if err != nil {
		return err
	}
	if _, err := s.loc.Locate(lat, lon); err != nil {
		if errors.Is(err, risk.ErrUnsupportedLocation) {
			return &Error{Code: codeUnsupportedLocation, Message: s.outsideCoverage(lat, lon)}
		}
		return fmt.Errorf("locate %v,%v: %w", lat, lon, err)
	}
	nj := locrisk.NewJob{AccountID: p.account.ID, Bucket: locrisk.BucketAPI, Latitude: lat, Longitude: lon}
	if idemKey != "" {
		nj.IdempotencyKey = idemKey
		nj.RequestHash = jobRequestHash(lat, lon)
	}
	now := s.now()
	job, replayed, err := s.store.CreateJob(r.Context(), nj, now)
	if err != nil {
		return storeError(err, codeReportJobNotFound, now)
	}
	if replayed {
		// Stripe's convention: tell the client it got the original answer.
		w.Header().Set("Idempotent-Replayed", "true")
	} else {
		s.notify()
	}
	w.Header().Set("Location", view.JobPath(job.ID))
	writeJSON(w, http.StatusAccepted, view.NewJob(job))
	return nil
}

// idempotencyKey validates the optional Idempotency-Key header: one value
// of 1..255 printable ASCII characters.
func idempotencyKey(r *http.Request) (string, error) {
	vals, present := r.Header["Idempotency-Key"]
	if !present {
		return "", nil
	}
	bad := func() error {
		return errorf(codeInvalidIdempotencyKey, "Idempotency-Key must be one value of 1 to %d printable ASCII characters", maxIdempotencyKeyLen)
	}
	if len(vals) != 1 || len(vals[0]) == 0 || len(vals[0]) > maxIdempotencyKeyLen {
		return "", bad()
	}
	for i := 0; i < len(vals[0]); i++ {
		if c := vals[0][i]; c < 0x20 || c > 0x7e {
			return "", bad()
		}
	}
	return vals[0], nil
}

// jobFields are the members of a job's body.
var jobFields = []string{"latitude", "longitude"}

// decodeCoordinates reads the body of POST /location-risk/report-jobs: a
// JSON object of at most maxBodyBytes whose latitude and longitude are JSON
// numbers in range. Unknown fields are ignored (and not kept); latitude is
// checked before longitude. A coordinate that is missing is refused with
// the unknown members named (missingHint): {"lat": ..., "lng": ...} says
// which names were meant.
func decodeCoordinates(w http.ResponseWriter, r *http.Request) (lat, lon float64, err error) {
	defer bodyParsed(r)
	obj, err := readObject(w, r)
	if err != nil {
		return 0, 0, err
	}
	var body struct{ latitude, longitude json.RawMessage }
	pickFields(obj, field{"latitude", &body.latitude}, field{"longitude", &body.longitude})
	lat, ok := coordinate(body.latitude, 90)
	if !ok {
		return 0, 0, &Error{Code: codeInvalidLatitude, Message: missingHint(msgLatitudeInvalid, body.latitude, obj, jobFields...)}
	}
	lon, ok = coordinate(body.longitude, 180)
	if !ok {
		return 0, 0, &Error{Code: codeInvalidLongitude, Message: missingHint(msgLongitudeInvalid, body.longitude, obj, jobFields...)}
	}
	return lat, lon, nil
}

// coordinate parses a raw JSON value that must be a number within
// [-bound, bound]. Strings, booleans, null and absent values are refused.
func coordinate(raw json.RawMessage, bound float64) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	// json.Valid has already checked the JSON number grammar, a subset of
	// what ParseFloat takes; overflow (1e400) is an error here.
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || v < -bound || v > bound {
		return 0, false
	}
	if v == 0 {
		v = 0 // -0 and 0 are the same place and must hash the same
	}
	return v, true
}

// jobRequestHash is the hex SHA-256 of a canonical form of a create
// request, so "10", "10.0" and "1e1" are the same payload to idempotency.
func jobRequestHash(lat, lon float64) string {
	sum := sha256.Sum256([]byte("report_job\nlatitude=" + formatCoord(lat) + "\nlongitude=" + formatCoord(lon)))
	return hex.EncodeToString(sum[:])
}

func formatCoord(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// listJobs is GET /location-risk/report-jobs (docs/api.md, Report jobs):
// the account's jobs, newest first, limit (default 20, 1..100), opaque
// cursor, optional status. A parameter that is present must be valid, empty
// included.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, p *principal) error {
	q, limit, cursor, err := pagedQuery(r)
	if err != nil {
		return err
	}
	status := ""
	if vs, ok := q["status"]; ok {
		status = vs[0]
		if !locrisk.ValidStatus(status) {
			return errorf(codeInvalidStatus, "status must be one of queued, processing, completed, failed")
		}
	}
	jobs, next, err := s.store.ListJobs(r.Context(), p.account.ID, status, limit, cursor)
	if err != nil {
		return storeError(err, codeReportJobNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewJobList(jobs, limit, next))
	return nil
}

// pageParams reads the limit and cursor of a cursor-paged list (docs/api.md,
// Report jobs): limit 1..maxPageSize, default defaultPageSize; cursor ""
// for the first page. A parameter that is present must be valid, empty
// included; whether a cursor is one this API returned is the store's to
// say (locrisk.ErrBadCursor).
func pageParams(q url.Values) (limit int, cursor string, err error) {
	limit = defaultPageSize
	if vs, ok := q["limit"]; ok {
		n, ok := parseBoundedInt(vs[0], 1, maxPageSize)
		if !ok {
			return 0, "", errorf(codeInvalidLimit, "limit must be an integer from 1 to %d", maxPageSize)
		}
		limit = n
	}
	if vs, ok := q["cursor"]; ok {
		if vs[0] == "" {
			return 0, "", errorf(codeInvalidCursor, "cursor is not a cursor this API returned")
		}
		cursor = vs[0]
	}
	return limit, cursor, nil
}

// pagedQuery parses a list operation's query string (parseQuery) and reads
// its limit and cursor (pageParams); q holds the operation's other
// parameters.
func pagedQuery(r *http.Request) (q url.Values, limit int, cursor string, err error) {
	if q, err = parseQuery(r); err != nil {
		return nil, 0, "", err
	}
	limit, cursor, err = pageParams(q)
	return q, limit, cursor, err
}

// parseQuery parses the query string strictly: a malformed one (bad
// percent-encoding, a semicolon) is 400 invalid_request rather than
// silently half-read.
func parseQuery(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, errorf(codeInvalidRequest, "the query string is malformed")
	}
	return q, nil
}

// parseBoundedInt accepts only plain decimal digits (no sign, no spaces)
// whose value is in [lo, hi].
func parseBoundedInt(s string, lo, hi int) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n >= lo && n <= hi
}

// pathID is the path wildcard named wildcard when it is one of our ids with
// prefix; anything else is the 404 notFound at once, since no lookup is
// needed to know it is unknown. These ids are opaque strings to clients
// (docs/api.md, "Identifiers"), so a malformed one is unknown, not a bad
// request; the message says what ours look like.
func pathID(r *http.Request, wildcard, prefix, notFound string) (string, error) {
	id := r.PathValue(wildcard)
	if !ids.HasPrefix(id, prefix) {
		return "", &Error{Code: notFound, Message: notFoundMessage(notFound) +
			" (" + wildcard + " values are " + prefix + " followed by at least 20 letters and digits, as the API returned them)"}
	}
	return id, nil
}

// outsideCoverage says that lat, lon is outside coverage, and names the
// likely slip when a near coordinate is covered (docs/api.md, Errors): the
// two look swapped when lon, lat would be covered; a longitude east of
// Greenwich lacks its minus sign when lat, -lon would be covered. Only a
// coordinate already refused gets here, so a covered east longitude
// (Guam, the Northern Mariana Islands, the Aleutians west of 180) is
// never questioned.
func (s *Server) outsideCoverage(lat, lon float64) string {
	msg := fmt.Sprintf("the coordinate %s, %s is outside the supported United States coverage", formatCoord(lat), formatCoord(lon))
	if math.Abs(lon) <= 90 {
		if _, err := s.loc.Locate(lon, lat); err == nil {
			msg += fmt.Sprintf("; latitude and longitude look swapped: latitude %s, longitude %s is covered",
				formatCoord(lon), formatCoord(lat))
		}
	}
	if lon > 0 {
		if _, err := s.loc.Locate(lat, -lon); err == nil {
			msg += fmt.Sprintf("; longitude %s is east of Greenwich, and US longitudes are negative (west) but for Guam, "+
				"the Northern Mariana Islands and the far western Aleutians: did you mean %s? latitude %s, longitude %s is covered",
				formatCoord(lon), formatCoord(-lon), formatCoord(lat), formatCoord(-lon))
		}
	}
	return msg
}

// jobIDParam is the {jobId} of the path, or a 404 report_job_not_found.
func jobIDParam(r *http.Request) (string, error) {
	return pathID(r, "jobId", ids.Job, codeReportJobNotFound)
}

// getJob is GET /location-risk/report-jobs/{jobId} (docs/api.md, Report
// jobs). Another account's job is 404, exactly like an unknown one.
func (s *Server) getJob(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := jobIDParam(r)
	if err != nil {
		return err
	}
	job, err := s.store.GetJob(r.Context(), p.account.ID, id)
	if err != nil {
		return storeError(err, codeReportJobNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewJob(job))
	return nil
}

// retryJob is POST /location-risk/report-jobs/{jobId}/retry (docs/api.md,
// Report jobs): a failed job with a transient error goes back to queued
// (202); anything else is 409 job_not_retryable. Retries use no quota.
func (s *Server) retryJob(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := jobIDParam(r)
	if err != nil {
		return err
	}
	now := s.now()
	job, err := s.store.RetryJob(r.Context(), p.account.ID, id, now)
	if err != nil {
		return storeError(err, codeReportJobNotFound, now)
	}
	s.notify()
	w.Header().Set("Location", view.JobPath(job.ID))
	writeJSON(w, http.StatusAccepted, view.NewJob(job))
	return nil
}
