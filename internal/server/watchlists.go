package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/view"
)

// Watchlists (docs/api.md, Watchlists): an account's standing lists of
// coordinates. Items are checked like a batch's (decodeItem, locateItems):
// an item with a bad coordinate or outside coverage is not added and is
// answered in rejected, with the batch item's code, while the others are;
// every item added gets an ordinary report job (bucket bulk), charged to
// the quota like a batch item. Re-scores that follow the data run in the
// scheduler's low-priority lane (internal/jobs) and are not charged.

// watchlistFields are the members of a watchlist's body; watchItemsFields
// those of an add request, removeFields those of a remove request.
var (
	watchlistFields  = []string{"name", "minScoreChange", "items"}
	watchItemsFields = []string{"items"}
	removeFields     = []string{"itemIds"}
)

// watchlistIDParam is the {watchlistId} of the path, or a 404.
func watchlistIDParam(r *http.Request) (string, error) {
	return pathID(r, "watchlistId", ids.Watchlist, codeWatchlistNotFound)
}

// watchItemsRequest is a decoded list of items: those to add, and those
// refused, with their row numbers (1-based positions in the request).
type watchItemsRequest struct {
	valid    []locrisk.NewWatchItem
	rejected []view.RejectedItem
}

// decodeWatchItems decodes the items member of a create or add body, as
// decodeBatch does a batch's (400 invalid_items, too_many_items), and
// decides coverage: the items refused are kept apart, with the code a
// batch item would get.
func (s *Server) decodeWatchItems(raw, obj json.RawMessage, required bool, known ...string) (watchItemsRequest, error) {
	req := watchItemsRequest{rejected: []view.RejectedItem{}}
	n := 0
	if len(raw) > 0 && raw[0] == '[' {
		n = countElements(raw)
	}
	switch {
	case n == 0 && !required && (len(bytes.TrimSpace(raw)) == 0 || isJSONNull(raw) || string(bytes.TrimSpace(raw)) == "[]"):
		return req, nil
	case n == 0:
		msg := "items must be a non-empty array of objects with latitude and longitude"
		if !required {
			msg = "items, when given, must be an array of objects with latitude and longitude"
		}
		return req, &Error{Code: codeInvalidItems, Message: missingHint(msg, raw, obj, known...)}
	case n > locrisk.MaxWatchItemsPerRequest:
		return req, errorf(codeTooManyItems, "one request adds at most %d items; this one has %d", locrisk.MaxWatchItemsPerRequest, n)
	}
	items := make([]locrisk.NewBatchItem, 0, n)
	var canon strings.Builder // decodeItem's canonical form: no idempotency here
	for el := range elements(raw) {
		items = append(items, decodeItem(el, &canon))
	}
	if err := s.locateItems(items); err != nil {
		return req, err
	}
	for i, it := range items {
		if it.ErrorCode != "" {
			req.rejected = append(req.rejected, view.RejectedItem{RowNumber: i + 1, ExternalID: optString(it.ExternalID),
				Latitude: it.Latitude, Longitude: it.Longitude, Error: view.BatchItemError{Code: it.ErrorCode, Message: it.ErrorMessage}})
			continue
		}
		req.valid = append(req.valid, locrisk.NewWatchItem{ExternalID: it.ExternalID, Latitude: *it.Latitude, Longitude: *it.Longitude})
	}
	return req, nil
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// minScoreChange decodes the optional minScoreChange member: an integer
// 1..100, DefaultMinScoreChange when absent or null.
func minScoreChange(raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isJSONNull(raw) {
		return locrisk.DefaultMinScoreChange, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 1 || n > locrisk.MaxMinScoreChange {
		return 0, errorf(codeInvalidMinScoreChange, "minScoreChange must be an integer from 1 to %d (default %d)",
			locrisk.MaxMinScoreChange, locrisk.DefaultMinScoreChange)
	}
	return n, nil
}

// createWatchlist is POST /location-risk/watchlists (docs/api.md,
// Watchlists): 201 with the list, the items added and those refused, and
// Location: the list's path. Checks in order: the body (415, 400, 413),
// name, minScoreChange, items; then the quota for the items added (429,
// nothing created).
func (s *Server) createWatchlist(w http.ResponseWriter, r *http.Request, p *principal) error {
	obj, err := readObject(w, r)
	if err != nil {
		return err
	}
	var body struct{ name, min, items json.RawMessage }
	pickFields(obj, field{"name", &body.name}, field{"minScoreChange", &body.min}, field{"items", &body.items})
	name, ok := freeText(body.name, batchNameRule)
	if !ok {
		bodyParsed(r)
		return errorf(codeInvalidName, "name must be a string of at most %d characters without control characters", maxBatchNameLen)
	}
	min, err := minScoreChange(body.min)
	if err != nil {
		bodyParsed(r)
		return err
	}
	req, err := s.decodeWatchItems(body.items, obj, false, watchlistFields...)
	bodyParsed(r)
	if err != nil {
		return err
	}
	now := s.now()
	wl, items, err := s.store.CreateWatchlist(r.Context(), locrisk.NewWatchlist{AccountID: p.account.ID, Name: name,
		MinScoreChange: min, Items: req.valid}, now)
	if err != nil {
		return storeError(err, codeWatchlistNotFound, now)
	}
	if len(items) > 0 {
		s.notify()
	}
	w.Header().Set("Location", view.WatchlistPath(wl.ID))
	writeJSON(w, http.StatusCreated, view.CreatedWatchlist{Watchlist: view.NewWatchlist(wl), Items: view.NewWatchItems(items),
		Rejected: req.rejected})
	return nil
}

// listWatchlists is GET /location-risk/watchlists: the account's lists
// newest first, paged like the job list.
func (s *Server) listWatchlists(w http.ResponseWriter, r *http.Request, p *principal) error {
	_, limit, cursor, err := pagedQuery(r)
	if err != nil {
		return err
	}
	ws, next, err := s.store.ListWatchlists(r.Context(), p.account.ID, limit, cursor)
	if err != nil {
		return storeError(err, codeWatchlistNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewWatchlistList(ws, limit, next))
	return nil
}

// getWatchlist is GET /location-risk/watchlists/{watchlistId}.
func (s *Server) getWatchlist(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := watchlistIDParam(r)
	if err != nil {
		return err
	}
	wl, err := s.store.GetWatchlist(r.Context(), p.account.ID, id)
	if err != nil {
		return storeError(err, codeWatchlistNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewWatchlist(wl))
	return nil
}

// deleteWatchlist is DELETE /location-risk/watchlists/{watchlistId}: 204;
// the list, its items and their planned re-scores go, the items' jobs and
// reports stay. A second DELETE is 404: the list is gone.
func (s *Server) deleteWatchlist(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := watchlistIDParam(r)
	if err != nil {
		return err
	}
	if err := s.store.DeleteWatchlist(r.Context(), p.account.ID, id); err != nil {
		return storeError(err, codeWatchlistNotFound, s.now())
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// addWatchItems is POST .../watchlists/{watchlistId}/items: 201 with the
// items added and those refused. Checks: the body and items (400), the
// list (404), its room (400 watchlist_full), the quota (429).
func (s *Server) addWatchItems(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := watchlistIDParam(r)
	if err != nil {
		return err
	}
	obj, err := readObject(w, r)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	pickFields(obj, field{"items", &raw})
	req, err := s.decodeWatchItems(raw, obj, true, watchItemsFields...)
	bodyParsed(r)
	if err != nil {
		return err
	}
	now := s.now()
	added := []locrisk.WatchItem{}
	if len(req.valid) > 0 {
		if added, err = s.store.AddWatchItems(r.Context(), p.account.ID, id, req.valid, now); err != nil {
			return storeError(err, codeWatchlistNotFound, now)
		}
		s.notify()
	} else if _, err := s.store.GetWatchlist(r.Context(), p.account.ID, id); err != nil {
		// Nothing to add still answers for the list.
		return storeError(err, codeWatchlistNotFound, now)
	}
	writeJSON(w, http.StatusCreated, view.AddedWatchItems{WatchlistID: id, Items: view.NewWatchItems(added), Rejected: req.rejected})
	return nil
}

// removeWatchItems is DELETE .../watchlists/{watchlistId}/items with
// {itemIds}: 200 with the ids removed and those the list does not hold.
func (s *Server) removeWatchItems(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := watchlistIDParam(r)
	if err != nil {
		return err
	}
	obj, err := readObject(w, r)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	pickFields(obj, field{"itemIds", &raw})
	bodyParsed(r)
	var itemIDs []string
	bad := json.Unmarshal(raw, &itemIDs) != nil || len(itemIDs) == 0
	if !bad && len(itemIDs) > locrisk.MaxWatchItemsPerRequest {
		return errorf(codeTooManyItems, "one request removes at most %d items; this one names %d", locrisk.MaxWatchItemsPerRequest, len(itemIDs))
	}
	if bad {
		return &Error{Code: codeInvalidItemIDs, Message: missingHint(
			fmt.Sprintf("itemIds must be a non-empty array of at most %d item ids (wli_...)", locrisk.MaxWatchItemsPerRequest),
			raw, obj, removeFields...)}
	}
	var ours []string
	for _, itemID := range itemIDs {
		if ids.HasPrefix(itemID, ids.WatchItem) {
			ours = append(ours, itemID)
		}
	}
	removed, err := s.store.RemoveWatchItems(r.Context(), p.account.ID, id, ours)
	if err != nil {
		return storeError(err, codeWatchlistNotFound, s.now())
	}
	out := view.RemovedWatchItems{WatchlistID: id, Removed: removed, NotFound: []string{}}
	gone := make(map[string]bool, len(removed))
	for _, itemID := range removed {
		gone[itemID] = true
	}
	for _, itemID := range itemIDs {
		if !gone[itemID] {
			out.NotFound = append(out.NotFound, itemID)
			gone[itemID] = true // named once
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listWatchItems is GET .../watchlists/{watchlistId}/items: the items
// newest first, paged like the job list, with changed=true (or false)
// keeping only the items whose last re-score changed them materially (or
// the others).
func (s *Server) listWatchItems(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := watchlistIDParam(r)
	if err != nil {
		return err
	}
	q, limit, cursor, err := pagedQuery(r)
	if err != nil {
		return err
	}
	var changed *bool
	if vs, ok := q["changed"]; ok {
		switch vs[0] {
		case "true", "false":
			v := vs[0] == "true"
			changed = &v
		default:
			return errorf(codeInvalidChanged, "changed must be true or false (leave it out for every item)")
		}
	}
	items, next, err := s.store.ListWatchItems(r.Context(), p.account.ID, id, changed, limit, cursor)
	if err != nil {
		return storeError(err, codeWatchlistNotFound, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewWatchItemList(id, items, limit, next))
	return nil
}

// rescoreWatchlist is POST .../watchlists/{watchlistId}/rescore (no body
// is read): every item is re-scored in the low-priority lane, without
// quota, at most once every RescoreRequestInterval per list (429
// rescore_too_soon with Retry-After); 202 with what was planned.
func (s *Server) rescoreWatchlist(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := watchlistIDParam(r)
	if err != nil {
		return err
	}
	now := s.now()
	rr, err := s.store.RequestRescore(r.Context(), p.account.ID, id, now)
	var soon *locrisk.RescoreTooSoonError
	if errors.As(err, &soon) {
		return &Error{Code: codeRescoreTooSoon, RetryAfter: soon.Allowed.Sub(now),
			Message: fmt.Sprintf("this watchlist was re-scored on demand less than %s ago; the next re-score may be asked for at %s",
				locrisk.RescoreRequestInterval, view.Time(soon.Allowed))}
	}
	if err != nil {
		return storeError(err, codeWatchlistNotFound, now)
	}
	s.notify() // an idle worker looks for the lane's work now
	w.Header().Set("Location", view.WatchItemsPath(id))
	writeJSON(w, http.StatusAccepted, view.NewRescore(rr))
	return nil
}
