package main

// `locrisk watchlists list`, `watchlists items`, `watchlists rescores` and
// `watchlists plan`: an operator's view of the accounts' watchlists and of
// the lane that re-scores their items when the data or methodology
// changes (docs/api.md, Watchlists; docs/operations.md, Re-scoring).

import (
	"encoding/csv"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/version"
	"github.com/locrisk/locrisk/internal/view"
)

func (c *cli) watchlistsList(args []string) error {
	var db, account string
	var asJSON bool
	f := c.newFlags("watchlists list", "--account ACCOUNT_ID [--json]", `
Lists an account's watchlists, newest first: id, name, items, items whose
last re-score changed them materially, minScoreChange, creation time and
the last on-demand re-score. --json prints them as the API shows them
(GET /api/v1/location-risk/watchlists).`, `
  locrisk watchlists list --account acct_...
  locrisk watchlists list --account acct_... --json`)
	f.StringVar(&account, "account", "", "the `ACCOUNT_ID` whose watchlists to list (required)")
	f.BoolVar(&asJSON, "json", false, "print a JSON array")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if account == "" {
		return usagef("--account is required")
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	lists, err := c.allWatchlists(st, account)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]view.Watchlist, 0, len(lists))
		for _, w := range lists {
			out = append(out, view.NewWatchlist(w))
		}
		return writeJSON(c.stdout, out)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tITEMS\tCHANGED\tMIN-CHANGE\tCREATED\tRESCORE-REQUESTED")
	for _, w := range lists {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", w.ID, strconv.Quote(w.Name), w.ItemCount, w.ChangedCount,
			w.MinScoreChange, apiTime(w.CreatedUTC), timeOrDash(w.RescoreRequestedUTC))
	}
	return tw.Flush()
}

// allWatchlists pages through the account's watchlists.
func (c *cli) allWatchlists(st store, account string) ([]locrisk.Watchlist, error) {
	if _, err := st.GetAccount(c.ctx, account); err != nil {
		return nil, fmt.Errorf("account %s: %w", account, err)
	}
	var all []locrisk.Watchlist
	cursor := ""
	for {
		page, next, err := st.ListWatchlists(c.ctx, account, locrisk.MaxPageLimit, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return apiTime(*t)
}

func (c *cli) watchlistsItems(args []string) error {
	var db, account, watchlist string
	var changed, asJSON, asCSV bool
	f := c.newFlags("watchlists items", "--account ACCOUNT_ID [--watchlist WATCHLIST_ID] [--changed] [--json | --csv]", `
Lists the items of one of an account's watchlists, or of all of them,
newest first: the list, the item, its externalId and coordinate, its latest
job's status, its current report with its score, level and data version,
whether its last re-score changed it materially, and when a re-score last
did. --changed keeps the changed items only. --json prints them as the
API shows them. --csv prints the CSV that locrisk score and locrisk data
diff read (externalId, latitude, longitude), for a dry run of a new data
pack over the items before it is served.`, `
  locrisk watchlists items --account acct_...
  locrisk watchlists items --account acct_... --changed --json
  locrisk watchlists items --account acct_... --csv > watched.csv`)
	f.StringVar(&account, "account", "", "the `ACCOUNT_ID` whose items to list (required)")
	f.StringVar(&watchlist, "watchlist", "", "only this `WATCHLIST_ID`'s items")
	f.BoolVar(&changed, "changed", false, "only the items whose last re-score changed them materially")
	f.BoolVar(&asJSON, "json", false, "print a JSON array")
	f.BoolVar(&asCSV, "csv", false, "print externalId, latitude and longitude as CSV, the input of locrisk data diff")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if account == "" {
		return usagef("--account is required")
	}
	if asJSON && asCSV {
		return usagef("give --json or --csv, not both")
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	var lists []string
	if watchlist != "" {
		if _, err := st.GetWatchlist(c.ctx, account, watchlist); err != nil {
			return fmt.Errorf("watchlist %s of account %s: %w", watchlist, account, err)
		}
		lists = []string{watchlist}
	} else {
		all, err := c.allWatchlists(st, account)
		if err != nil {
			return err
		}
		for _, w := range all {
			lists = append(lists, w.ID)
		}
	}
	var filter *bool
	if changed {
		filter = &changed
	}
	var items []locrisk.WatchItem
	for _, id := range lists {
		cursor := ""
		for {
			page, next, err := st.ListWatchItems(c.ctx, account, id, filter, locrisk.MaxPageLimit, cursor)
			if err != nil {
				return err
			}
			items = append(items, page...)
			if next == "" {
				break
			}
			cursor = next
		}
	}
	if asJSON {
		return writeJSON(c.stdout, view.NewWatchItems(items))
	}
	if asCSV {
		w := csv.NewWriter(c.stdout)
		w.UseCRLF = true
		_ = w.Write([]string{"externalId", "latitude", "longitude"})
		for _, it := range items {
			_ = w.Write([]string{it.ExternalID, strconv.FormatFloat(it.Latitude, 'f', -1, 64), strconv.FormatFloat(it.Longitude, 'f', -1, 64)})
		}
		w.Flush()
		return w.Error()
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WATCHLIST\tITEM\tEXTERNAL-ID\tLATITUDE\tLONGITUDE\tSTATUS\tREPORT\tSCORE\tLEVEL\tDATA-VERSION\tCHANGED\tLAST-CHANGED")
	for _, it := range items {
		v := view.NewWatchItem(it)
		report, score, level, dv := "-", "-", "-", "-"
		if v.ReportID != nil {
			report = *v.ReportID
			dv = v.Versions.DataVersion
		}
		if v.Score != nil {
			score, level = strconv.Itoa(*v.Score), *v.RiskLevel
		}
		status := "-"
		if v.Status != nil {
			status = *v.Status
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%s\t%s\t%s\t%s\t%s\t%v\t%s\n", it.WatchlistID, it.ID, strconv.Quote(it.ExternalID),
			it.Latitude, it.Longitude, status, report, score, level, dv, it.Changed, timeOrDash(it.LastChangedUTC))
	}
	return tw.Flush()
}

func (c *cli) watchlistsRescores(args []string) error {
	var db string
	var asJSON bool
	f := c.newFlags("watchlists rescores", "[--json]", `
Shows the re-score lane's backlog (docs/operations.md, Re-scoring): the
re-scores planned and not started, those of a data or methodology change
and those an account asked for, the oldest planned, and how many have
started since the lists were made. A server starts planned re-scores only
when no caller's job waits, at most --rescore-rate a second.`, `
  locrisk watchlists rescores
  locrisk watchlists rescores --json`)
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	b, err := st.RescoreBacklog(c.ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, map[string]any{"pendingDataChange": b.PendingVersion, "pendingRequested": b.PendingRequested,
			"started": b.Started, "oldestPendingUtc": apiTimePtr(b.Oldest)})
	}
	_, err = fmt.Fprintf(c.stdout, "pending (data or methodology change): %d\npending (asked for): %d\noldest pending: %s\nstarted: %d\n",
		b.PendingVersion, b.PendingRequested, timeOrDash(b.Oldest), b.Started)
	return err
}

func (c *cli) watchlistsPlan(args []string) error {
	var db, dataDir string
	var asJSON bool
	f := c.newFlags("watchlists plan", "[--data-dir DIR] [--json]", `
Plans the re-score of every watch item whose current report was made with
other data or methodology versions than this binary serving the built-in
data, or the pack in --data-dir, would use, as a server does when it
starts and every ten minutes after; each item once per version change,
however often this runs. Servers serving those versions start them in
their low-priority lane. Prints the versions and how many items were
planned now. It reads the pack's manifest only.`, `
  locrisk watchlists plan
  locrisk watchlists plan --data-dir ./pack --json`)
	f.StringVar(&dataDir, "data-dir", "", dataFlagUsage)
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	fsys, name, err := dataPack(dataDir)
	if err != nil {
		return fmt.Errorf("data pack %s: %w", name, err)
	}
	m, err := data.ReadManifest(fsys)
	if err != nil {
		return fmt.Errorf("data pack %s: %w", name, err)
	}
	v := locrisk.ScoreVersions{Data: m.Version(), Methodology: risk.MethodologyVersion, Engine: version.String()}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.PlanRescores(c.ctx, v, time.Now())
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, map[string]any{"dataVersion": v.Data, "methodologyVersion": v.Methodology, "planned": n})
	}
	_, err = fmt.Fprintf(c.stdout, "data version: %s\nmethodology version: %s\nplanned: %d\n", v.Data, v.Methodology, n)
	return err
}
