package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/view"
)

// Coordinate batches (docs/api.md, Batches). A batch is a
// list of items; each valid item becomes an ordinary report job (bucket
// bulk) run by the same scheduler as single jobs, and an item with a bad
// coordinate is kept as a rejected item instead of failing the request.
// The batch's status, counts and progress are derived from its items and
// their jobs whenever it is read (locrisk.Batches.GetBatch).

// Limits of batch creation (docs/api.md, Batches).
const (
	maxBatchItems       = 100
	maxBatchNameLen     = 200 // characters (Unicode code points)
	maxExternalIDLen    = 128 // characters (Unicode code points)
	msgLatitudeInvalid  = "latitude is required and must be a JSON number from -90 to 90"
	msgLongitudeInvalid = "longitude is required and must be a JSON number from -180 to 180"
)

// createBatch is POST /location-risk/batches (docs/api.md, Batches). Checks
// run in the order docs/api.md gives (Authentication, scopes and check
// order): the 400s (Idempotency-Key header, then the body and every item's
// structure), coverage per item (a rejected item, never a request error),
// then the store's 409 idempotency and 429 quota. Nothing is created unless
// everything is.
func (s *Server) createBatch(w http.ResponseWriter, r *http.Request, p *principal) error {
	idemKey, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	req, err := decodeBatch(w, r)
	if err != nil {
		return err
	}
	if err := s.locateItems(req.items); err != nil {
		return err
	}
	nb := locrisk.NewBatch{AccountID: p.account.ID, Name: req.name, Items: req.items}
	if idemKey != "" {
		nb.IdempotencyKey = idemKey
		nb.RequestHash = req.hash
	}
	now := s.now()
	b, replayed, err := s.store.CreateBatch(r.Context(), nb, now)
	if err != nil {
		return storeError(err, codeBatchNotFound, now)
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	} else if b.Counts.Queued > 0 {
		s.notify()
	}
	w.Header().Set("Location", view.BatchPath(b.ID))
	writeJSON(w, http.StatusAccepted, view.NewBatch(b))
	return nil
}

// batchRequest is a decoded batch creation body. Items whose coordinate is
// not a number in range are already marked rejected; coverage is decided
// later by locateItems.
type batchRequest struct {
	name  string
	items []locrisk.NewBatchItem
	hash  string // hex SHA-256 of the canonical request, for idempotency
}

// decodeBatch reads and validates the body of POST /location-risk/batches.
// Request-level errors (400 invalid_request, invalid_name, invalid_items,
// too_many_items, 413) refuse the whole request; a bad coordinate or a
// malformed externalId only rejects its item (docs/api.md, Create a batch):
// one bad row of a portfolio must not hold up the other 99, and the
// rejected row keeps its rowNumber, so the results still match up.
func decodeBatch(w http.ResponseWriter, r *http.Request) (batchRequest, error) {
	defer bodyParsed(r)
	obj, err := readObject(w, r)
	if err != nil {
		return batchRequest{}, err
	}
	var body struct{ name, items json.RawMessage }
	pickFields(obj, field{"name", &body.name}, field{"items", &body.items})
	var req batchRequest
	name, ok := freeText(body.name, batchNameRule)
	if !ok {
		return batchRequest{}, errorf(codeInvalidName, "name must be a string of at most %d characters without control characters", maxBatchNameLen)
	}
	req.name = name
	n := 0
	if len(body.items) > 0 && body.items[0] == '[' {
		n = countElements(body.items)
	}
	if n == 0 {
		return batchRequest{}, &Error{Code: codeInvalidItems, Message: missingHint(
			"items is required and must be a non-empty array of objects with latitude and longitude", body.items, obj, batchFields...)}
	}
	if n > maxBatchItems {
		return batchRequest{}, errorf(codeTooManyItems, "a batch holds at most %d items; this one has %d", maxBatchItems, n)
	}

	canon := &strings.Builder{}
	canon.WriteString("batch\nname=" + strconv.Quote(req.name))
	req.items = make([]locrisk.NewBatchItem, 0, n)
	for raw := range elements(body.items) {
		req.items = append(req.items, decodeItem(raw, canon))
	}
	sum := sha256.Sum256([]byte(canon.String()))
	req.hash = hex.EncodeToString(sum[:])
	return req, nil
}

// batchFields are the members of a batch's body, itemFields those of one
// of its items.
var (
	batchFields = []string{"name", "items"}
	itemFields  = []string{"externalId", "latitude", "longitude"}
)

// decodeItem decodes one item, a value of the validated body, and appends its canonical form to canon. Members other than externalId,
// latitude and longitude are ignored, as in the body of a single job (POST
// /location-risk/report-jobs), and named in the error of a coordinate
// that is missing (missingHint). An item that is not a JSON object is
// rejected with invalid_latitude: it carries no coordinate, which is what
// that code says.
func decodeItem(raw json.RawMessage, canon *strings.Builder) locrisk.NewBatchItem {
	var it locrisk.NewBatchItem
	if len(raw) == 0 || raw[0] != '{' {
		canon.WriteString("\nnot-an-object " + compactJSON(raw))
		it.ErrorCode = codeInvalidLatitude
		it.ErrorMessage = "the item is not a JSON object with latitude and longitude"
		return it
	}
	var fields struct{ externalID, latitude, longitude json.RawMessage }
	pickFields(raw, field{"externalId", &fields.externalID}, field{"latitude", &fields.latitude}, field{"longitude", &fields.longitude})
	latRaw, lonRaw := fields.latitude, fields.longitude
	it.Latitude, it.Longitude = jsonNumber(latRaw), jsonNumber(lonRaw)
	id, idOK := freeText(fields.externalID, externalIDRule)
	if idOK {
		it.ExternalID = id
		canon.WriteString("\nitem " + strconv.Quote(it.ExternalID))
	} else {
		// The label cannot be stored as sent, so the item keeps none; the
		// canonical form keeps what was sent, for idempotency.
		canon.WriteString("\nbad-external-id " + compactJSON(fields.externalID))
	}
	canon.WriteString(" " + canonicalNumber(latRaw) + " " + canonicalNumber(lonRaw))
	lat, latOK := coordinate(latRaw, 90)
	lon, lonOK := coordinate(lonRaw, 180)
	switch {
	case !idOK:
		it.ErrorCode = codeInvalidExternalID
		it.ErrorMessage = fmt.Sprintf("externalId must be a string of at most %d characters", maxExternalIDLen)
	case !latOK:
		it.ErrorCode, it.ErrorMessage = codeInvalidLatitude, missingHint(msgLatitudeInvalid, latRaw, raw, itemFields...)
	case !lonOK:
		it.ErrorCode, it.ErrorMessage = codeInvalidLongitude, missingHint(msgLongitudeInvalid, lonRaw, raw, itemFields...)
	default:
		it.Latitude, it.Longitude = &lat, &lon
	}
	return it
}

// locateItems rejects the items outside coverage. A failure of the
// locator other than "not covered" fails the request (500): it says
// nothing about the item.
func (s *Server) locateItems(items []locrisk.NewBatchItem) error {
	for i := range items {
		it := &items[i]
		if it.ErrorCode != "" {
			continue
		}
		if _, err := s.loc.Locate(*it.Latitude, *it.Longitude); err != nil {
			if !errors.Is(err, risk.ErrUnsupportedLocation) {
				return fmt.Errorf("locate item %d (%v,%v): %w", i+1, *it.Latitude, *it.Longitude, err)
			}
			it.ErrorCode = codeUnsupportedLocation
			it.ErrorMessage = s.outsideCoverage(*it.Latitude, *it.Longitude)
		}
	}
	return nil
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonNumber is the value of raw if it is a finite JSON number (in range
// or not), kept on a rejected item so the caller sees what was sent; nil
// for anything else.
func jsonNumber(raw json.RawMessage) *float64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return nil
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil
	}
	if v == 0 {
		v = 0 // no -0
	}
	return &v
}

// canonicalNumber is the canonical text of a coordinate member for the
// request hash: numbers by value (so 10, 10.0 and 1e1 are one payload),
// anything else as its compact JSON, and "-" when absent.
func canonicalNumber(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "-"
	}
	if v := jsonNumber(raw); v != nil {
		return formatCoord(*v)
	}
	return compactJSON(raw)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// batchIDParam is the {batchId} of the path, or a 404 when it cannot be one
// of our ids.
func batchIDParam(r *http.Request) (string, error) {
	return pathID(r, "batchId", ids.Batch, codeBatchNotFound)
}

// getBatch is GET /location-risk/batches/{batchId} (docs/api.md, Batches).
// Another account's batch is 404, exactly like an unknown one.
func (s *Server) getBatch(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := batchIDParam(r)
	if err != nil {
		return err
	}
	b, err := s.store.GetBatch(r.Context(), p.account.ID, id)
	if err != nil {
		return storeError(err, codeBatchNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewBatch(b))
	return nil
}

// listBatches is GET /location-risk/batches (docs/api.md, Batches): the
// account's batches newest first, each as getBatch shows it, with the job
// list's limit and cursor (pageParams).
func (s *Server) listBatches(w http.ResponseWriter, r *http.Request, p *principal) error {
	_, limit, cursor, err := pagedQuery(r)
	if err != nil {
		return err
	}
	batches, next, err := s.store.ListBatches(r.Context(), p.account.ID, limit, cursor)
	if err != nil {
		return storeError(err, codeBatchNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewBatchList(batches, limit, next))
	return nil
}

// getBatchItems is GET /location-risk/batches/{batchId}/items (docs/api.md,
// Batches): every item in rowNumber order (at most maxBatchItems, so no
// paging).
func (s *Server) getBatchItems(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := batchIDParam(r)
	if err != nil {
		return err
	}
	out := view.BatchItems{BatchID: id, Items: make([]view.BatchItem, 0, maxBatchItems)}
	err = s.store.BatchItems(r.Context(), p.account.ID, id, func(it locrisk.BatchItem) error {
		out.Items = append(out.Items, view.NewBatchItem(it))
		return nil
	})
	if err != nil {
		return storeError(err, codeBatchNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
