package view

import (
	"encoding/json"
	"fmt"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/reportdiff"
	"github.com/locrisk/locrisk/internal/webhook"
)

// WatchlistsPath is the collection of watchlists (docs/api.md, Watchlists).
const WatchlistsPath = APIPrefix + "/location-risk/watchlists"

// WatchlistPath is the path of one watchlist.
func WatchlistPath(id string) string { return WatchlistsPath + "/" + id }

// WatchItemsPath is the path of a watchlist's items.
func WatchItemsPath(id string) string { return WatchlistPath(id) + "/items" }

// WatchRescorePath is the path that re-scores a watchlist on demand.
func WatchRescorePath(id string) string { return WatchlistPath(id) + "/rescore" }

// Watchlist is a watchlist as the API shows it (docs/api.md, Watchlists).
type Watchlist struct {
	WatchlistID         string  `json:"watchlistId"`
	Name                *string `json:"name"` // null when none was given
	MinScoreChange      int     `json:"minScoreChange"`
	ItemCount           int     `json:"itemCount"`
	ChangedCount        int     `json:"changedCount"`
	CreatedUTC          string  `json:"createdUtc"`
	RescoreRequestedUTC *string `json:"rescoreRequestedUtc"`
	StatusURL           string  `json:"statusUrl"`
	ItemsURL            string  `json:"itemsUrl"`
	RescoreURL          string  `json:"rescoreUrl"`
}

// NewWatchlist renders w.
func NewWatchlist(w locrisk.Watchlist) Watchlist {
	return Watchlist{WatchlistID: w.ID, Name: optString(w.Name), MinScoreChange: w.MinScoreChange,
		ItemCount: w.ItemCount, ChangedCount: w.ChangedCount, CreatedUTC: Time(w.CreatedUTC),
		RescoreRequestedUTC: TimePtr(w.RescoreRequestedUTC), StatusURL: WatchlistPath(w.ID),
		ItemsURL: WatchItemsPath(w.ID), RescoreURL: WatchRescorePath(w.ID)}
}

// WatchlistList is the response of GET /location-risk/watchlists.
type WatchlistList struct {
	Watchlists []Watchlist `json:"watchlists"`
	Limit      int         `json:"limit"`
	NextCursor *string     `json:"nextCursor"`
}

// NewWatchlistList renders one page of lists; next is "" on the last.
func NewWatchlistList(ws []locrisk.Watchlist, limit int, next string) WatchlistList {
	out := WatchlistList{Watchlists: make([]Watchlist, 0, len(ws)), Limit: limit}
	for _, w := range ws {
		out.Watchlists = append(out.Watchlists, NewWatchlist(w))
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}

// Versions are what made a report (docs/verification.md).
type Versions struct {
	DataVersion        string  `json:"dataVersion"`
	MethodologyVersion *string `json:"methodologyVersion"`
	EngineVersion      *string `json:"engineVersion"`
}

// WatchItem is an item of a watchlist. Every field is always present;
// those that do not apply (yet) are null.
type WatchItem struct {
	ItemID           string          `json:"itemId"`
	WatchlistID      string          `json:"watchlistId"`
	ExternalID       *string         `json:"externalId"`
	Latitude         float64         `json:"latitude"`
	Longitude        float64         `json:"longitude"`
	CreatedUTC       string          `json:"createdUtc"`
	Status           *string         `json:"status"`
	ReportJobID      *string         `json:"reportJobId"`
	ReportID         *string         `json:"reportId"`
	Score            *int            `json:"score"`
	RiskLevel        *string         `json:"riskLevel"`
	ModuleScores     map[string]*int `json:"moduleScores"`
	ScoredUTC        *string         `json:"scoredUtc"`
	Versions         *Versions       `json:"versions"`
	PreviousReportID *string         `json:"previousReportId"`
	Changed          bool            `json:"changed"`
	LastChangedUTC   *string         `json:"lastChangedUtc"`
	Error            *BatchItemError `json:"error"`
}

// NewWatchItem renders it.
func NewWatchItem(it locrisk.WatchItem) WatchItem {
	v := WatchItem{ItemID: it.ID, WatchlistID: it.WatchlistID, ExternalID: optString(it.ExternalID),
		Latitude: it.Latitude, Longitude: it.Longitude, CreatedUTC: Time(it.CreatedUTC), Status: it.JobStatus,
		ReportJobID: it.JobID, PreviousReportID: it.PreviousReportID, Changed: it.Changed,
		LastChangedUTC: TimePtr(it.LastChangedUTC)}
	if c := it.Current; c != nil {
		id := c.ReportID
		v.ReportID = &id
		v.ScoredUTC = TimePtr(&c.GeneratedUTC)
		v.Versions = &Versions{DataVersion: c.Versions.Data, MethodologyVersion: optString(c.Versions.Methodology),
			EngineVersion: optString(c.Versions.Engine)}
		if sc := c.Scores; sc != nil {
			score, level := sc.Overall, sc.RiskLevel
			v.Score, v.RiskLevel = &score, &level
			v.ModuleScores = make(map[string]*int, len(sc.Modules))
			for _, m := range sc.Modules {
				v.ModuleScores[m.Module] = m.Score
			}
		}
	}
	if it.JobErrorCode != nil {
		v.Error = &BatchItemError{Code: *it.JobErrorCode}
		if it.JobErrorMessage != nil {
			v.Error.Message = *it.JobErrorMessage
		}
	}
	return v
}

// NewWatchItems renders items, never nil.
func NewWatchItems(items []locrisk.WatchItem) []WatchItem {
	out := make([]WatchItem, 0, len(items))
	for _, it := range items {
		out = append(out, NewWatchItem(it))
	}
	return out
}

// WatchItemList is the response of GET .../watchlists/{watchlistId}/items.
type WatchItemList struct {
	WatchlistID string      `json:"watchlistId"`
	Items       []WatchItem `json:"items"`
	Limit       int         `json:"limit"`
	NextCursor  *string     `json:"nextCursor"`
}

// NewWatchItemList renders one page of items; next is "" on the last.
func NewWatchItemList(watchlistID string, items []locrisk.WatchItem, limit int, next string) WatchItemList {
	out := WatchItemList{WatchlistID: watchlistID, Items: NewWatchItems(items), Limit: limit}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}

// RejectedItem is an item of a create or add request that was not added,
// with the error a batch item would get (docs/api.md, Watchlists).
type RejectedItem struct {
	RowNumber  int            `json:"rowNumber"`
	ExternalID *string        `json:"externalId"`
	Latitude   *float64       `json:"latitude"`
	Longitude  *float64       `json:"longitude"`
	Error      BatchItemError `json:"error"`
}

// CreatedWatchlist is the response of POST /location-risk/watchlists.
type CreatedWatchlist struct {
	Watchlist Watchlist      `json:"watchlist"`
	Items     []WatchItem    `json:"items"`
	Rejected  []RejectedItem `json:"rejected"`
}

// AddedWatchItems is the response of POST .../watchlists/{watchlistId}/items.
type AddedWatchItems struct {
	WatchlistID string         `json:"watchlistId"`
	Items       []WatchItem    `json:"items"`
	Rejected    []RejectedItem `json:"rejected"`
}

// RemovedWatchItems is the response of DELETE .../watchlists/{watchlistId}/items.
type RemovedWatchItems struct {
	WatchlistID string   `json:"watchlistId"`
	Removed     []string `json:"removed"`
	NotFound    []string `json:"notFound"`
}

// Rescore is the response of POST .../watchlists/{watchlistId}/rescore.
type Rescore struct {
	WatchlistID    string `json:"watchlistId"`
	Items          int    `json:"items"`
	RequestedUTC   string `json:"requestedUtc"`
	NextAllowedUTC string `json:"nextAllowedUtc"`
	ItemsURL       string `json:"itemsUrl"`
}

// NewRescore renders rr.
func NewRescore(rr locrisk.RescoreRequest) Rescore {
	return Rescore{WatchlistID: rr.WatchlistID, Items: rr.Items, RequestedUTC: Time(rr.RequestedUTC),
		NextAllowedUTC: Time(rr.RequestedUTC.Add(locrisk.RescoreRequestInterval)), ItemsURL: WatchItemsPath(rr.WatchlistID)}
}

// ReportChanged is the data of a report.changed webhook event
// (docs/webhooks.md, report.changed): which item changed, its two reports
// and what made each, and what changed between them as operation 21
// (GET .../reports/{reportId}/changes) shows it at the list's
// minScoreChange: the overall result and every module whose score or
// level differs, each marked material or not.
type ReportChanged struct {
	WatchlistID       string              `json:"watchlistId"`
	ItemID            string              `json:"itemId"`
	ExternalID        *string             `json:"externalId"`
	Latitude          float64             `json:"latitude"`
	Longitude         float64             `json:"longitude"`
	MinScoreChange    int                 `json:"minScoreChange"`
	PreviousReportID  string              `json:"previousReportId"`
	CurrentReportID   string              `json:"currentReportId"`
	PreviousReportURL string              `json:"previousReportUrl"`
	CurrentReportURL  string              `json:"currentReportUrl"`
	ChangesURL        string              `json:"changesUrl"`
	Previous          reportdiff.Versions `json:"previous"`
	Current           reportdiff.Versions `json:"current"`
	Overall           OverallChange       `json:"overall"`
	Changes           []ModuleChange      `json:"changes"`
}

// NewReportChangedEvent is the report.changed event, with id (evt_...),
// of the change c, compared as cmp, which job made at its completion
// (the event's createdUtc).
func NewReportChangedEvent(id string, c locrisk.WatchChange, cmp reportdiff.Comparison, job locrisk.Job) (webhook.Event, error) {
	if job.CompletedUTC == nil {
		return webhook.Event{}, fmt.Errorf("job %s has no completion time", job.ID)
	}
	it, min := c.Item, c.Item.MinScoreChange
	v := ReportChanged{WatchlistID: it.WatchlistID, ItemID: it.ID, ExternalID: optString(it.ExternalID),
		Latitude: it.Latitude, Longitude: it.Longitude, MinScoreChange: min,
		PreviousReportID: c.Previous.ReportID, CurrentReportID: c.Report.ID,
		PreviousReportURL: ReportPath(c.Previous.ReportID), CurrentReportURL: ReportPath(c.Report.ID),
		ChangesURL: ReportChangesPath(c.Report.ID, c.Previous.ReportID, min),
		Previous:   cmp.Previous, Current: cmp.Current,
		Overall: OverallChange{Overall: cmp.Overall, Material: cmp.Overall.Material(min)},
		Changes: make([]ModuleChange, len(cmp.Changes))}
	for i, m := range cmp.Changes {
		if m.Indicators == nil {
			m.Indicators = []reportdiff.IndicatorMove{}
		}
		v.Changes[i] = ModuleChange{ModuleChange: m, Material: m.Material(min)}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return webhook.Event{}, fmt.Errorf("encode change of %s: %w", it.ID, err)
	}
	return webhook.NewChangeEvent(id, *job.CompletedUTC, data), nil
}
