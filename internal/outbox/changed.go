package outbox

import (
	"context"
	"fmt"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/reportdiff"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/internal/webhook"
)

// changeEvent judges the change c that job made to a watch item
// (docs/api.md, Watchlists): when the new report differs materially from
// the one before at the list's minScoreChange (reportdiff's rule: a risk
// level changed, overall or of a module, or a score moved by at least that
// much), it marks the item changed and writes the report.changed event for
// the account's subscribers. Equal scores cannot differ materially, so
// the bodies are compared only when some score moved. Nothing is written
// when nothing material changed.
func changeEvent(ctx context.Context, tx locrisk.Tx, job locrisk.Job, c locrisk.WatchChange) (wrote bool, err error) {
	if locrisk.ScoresEqual(c.Previous.Scores, c.Report.Scores) {
		return false, nil
	}
	if job.CompletedUTC == nil {
		return false, fmt.Errorf("final job %s has no completion time", job.ID)
	}
	prev, err := tx.ReadReport(ctx, c.Previous.ReportID)
	if err != nil {
		return false, fmt.Errorf("previous report of watch item %s: %w", c.Item.ID, err)
	}
	cmp, err := reportdiff.Compare(prev.Body, c.Report.Body)
	if err != nil {
		return false, fmt.Errorf("compare the reports of watch item %s: %w", c.Item.ID, err)
	}
	cmp.PreviousReportID, cmp.CurrentReportID = prev.ID, c.Report.ID
	if !cmp.IsMaterial(c.Item.MinScoreChange) {
		return false, nil
	}
	if err := tx.MarkWatchItemChanged(ctx, c.Item.ID, *job.CompletedUTC); err != nil {
		return false, fmt.Errorf("mark watch item %s changed: %w", c.Item.ID, err)
	}
	endpoints, err := tx.WebhookSubscribers(ctx, job.AccountID, webhook.EventReportChanged)
	if err != nil || len(endpoints) == 0 {
		return false, err
	}
	ev, err := view.NewReportChangedEvent(ids.New(ids.Event), c, cmp, job)
	if err != nil {
		return false, err
	}
	return insert(ctx, tx, ev, job.AccountID, job.ID, *job.CompletedUTC, endpoints)
}
