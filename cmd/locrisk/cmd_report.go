package main

// `locrisk report`: an operator's report from the command line. The job is
// an ordinary report job in the usage bucket "manual" (so the account's
// monthly quota applies and usage history shows it apart from API and
// batch jobs); the command then waits for it and prints the result.
//
// Waiting: a server running on the same database would take the job with
// its own workers, but the command does not rely on one. It loads the
// engine and runs a one-worker scheduler of its own while it waits;
// whichever worker claims the job first holds its lease, and the store lets
// only the lease holder complete it, so the job completes exactly once.
// Like any worker, the command's one may also run other queued jobs while
// it waits; it stops when its own job is done.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/jobs"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/hazard"
	"github.com/locrisk/locrisk/internal/signing"
	"github.com/locrisk/locrisk/internal/view"
)

// reportPollInterval is how often the command looks at its job.
const reportPollInterval = 25 * time.Millisecond

func (c *cli) report(args []string) error {
	var account, db, dataDir, pdfPath, keyFile string
	var asJSON bool
	var timeout time.Duration
	f := c.newFlags("report", "--account ACCOUNT_ID [flags] LATITUDE LONGITUDE", `
Queues a report job for the coordinate in the account's "manual" usage
bucket (the monthly quota applies), waits for it, and prints the report's
summary: as text, or with --json as the API's summary JSON (GET
.../reports/{id}?detail=summary). --pdf FILE also writes the PDF report.
The JSON and the PDF are signed with the service's report signing key, as
the API signs them (docs/verification.md), so the secret key file serve
uses must be at hand (--secret-key-file).

The command loads the engine itself, from the built-in data or the pack in
--data-dir, and runs a worker of its own while it waits, so it
needs no running server; if a server shares the database, whichever worker
claims the job first runs it, once.
The coordinate is two arguments or one, "LATITUDE,LONGITUDE"; negative
numbers need no quoting: "report ... 41.88 -87.63" and "41.88,-87.63" work.
Exit status 1 when the location is not covered, the quota is used up, the
job fails or the wait times out.`, `
  locrisk report --account acct_... 41.8781 -87.6298
  locrisk report --account acct_... --json 41.8781,-87.6298 > summary.json
  locrisk report --account acct_... --data-dir ./pack --pdf chicago.pdf 41.8781 -87.6298`)
	f.StringVar(&account, "account", "", "account `id` the job is made for (required)")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	f.StringVar(&dataDir, "data-dir", "", dataFlagUsage)
	f.StringVar(&pdfPath, "pdf", "", "also write the PDF report to `file`")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	f.DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the job")
	f.StringVar(&keyFile, "secret-key-file", "", "`file` with the key that seals the report signing key at rest, as serve's (default: the --db file name + \".key\", created if absent)")
	pos, err := f.parse(positionalsLast(f.FlagSet, args))
	if err != nil {
		return err
	}
	if account == "" {
		return usagef("--account is required")
	}
	coord, err := coordinateArgs(pos)
	if err != nil {
		return err
	}
	lat, err := strconv.ParseFloat(coord[0], 64)
	if err != nil || !(lat >= -90 && lat <= 90) { // NaN fails too
		return usagef("latitude %q must be a number from -90 to 90", coord[0])
	}
	lon, err := strconv.ParseFloat(coord[1], 64)
	if err != nil || !(lon >= -180 && lon <= 180) {
		return usagef("longitude %q must be a number from -180 to 180", coord[1])
	}
	if timeout <= 0 {
		return usagef("--timeout must be positive")
	}

	// Only warnings and errors: stdout is the result, stderr stays quiet.
	log := c.quietLog()
	dataFS, dataName, err := checkedDataPack(dataDir)
	if err != nil {
		return err
	}
	// Opened with the secret key file, as serve opens it: the JSON and the
	// PDF printed are signed with the service's key (docs/verification.md).
	st, err := c.openStore(db, storeUse{mustExist: true, sealed: true, keyFile: keyFile})
	if err != nil {
		return err
	}
	defer st.Close()
	signer := signing.New(st, nil)
	eng, err := risk.Load(c.ctx, dataFS, log, st)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", dataName, err)
	}
	if _, err := st.GetAccount(c.ctx, account); errors.Is(err, locrisk.ErrNotFound) {
		return fmt.Errorf("account %s not found (create one with 'locrisk accounts create --name NAME')", account)
	} else if err != nil {
		return err
	}
	if _, err := eng.Locate(lat, lon); errors.Is(err, risk.ErrUnsupportedLocation) {
		return fmt.Errorf("unsupported_location: %v, %v is outside the supported United States coverage", lat, lon)
	} else if err != nil {
		return fmt.Errorf("locate %v, %v: %w", lat, lon, err)
	}

	job, _, err := st.CreateJob(c.ctx, locrisk.NewJob{AccountID: account, Bucket: locrisk.BucketManual, Latitude: lat, Longitude: lon}, time.Now())
	var qe *locrisk.QuotaError
	if errors.As(err, &qe) {
		return fmt.Errorf("quota_exceeded: account %s has used its %d report jobs of this month; the quota resets at %s",
			account, qe.Limit, apiTime(qe.ResetsAt))
	}
	if err != nil {
		return err
	}

	job, err = c.waitForJob(st, eng, log, job, timeout)
	if err != nil {
		return err
	}
	if job.Status == locrisk.StatusFailed {
		code, msg := "", ""
		if job.ErrorCode != nil {
			code = *job.ErrorCode
		}
		if job.ErrorMessage != nil {
			msg = *job.ErrorMessage
		}
		return fmt.Errorf("job %s failed: %s: %s", job.ID, code, msg)
	}
	rep, err := st.GetReport(c.ctx, account, *job.ReportID)
	if err != nil {
		return fmt.Errorf("job %s completed but its report cannot be read: %w", job.ID, err)
	}

	if pdfPath != "" {
		doc, err := view.SignedPDF(c.ctx, rep, eng, signer)
		if err != nil {
			return err
		}
		if err := os.WriteFile(pdfPath, doc, 0o644); err != nil {
			return fmt.Errorf("writing the PDF: %w", err)
		}
		fmt.Fprintf(c.stderr, "wrote %s (%d bytes)\n", pdfPath, len(doc))
	}
	if asJSON {
		doc, err := view.SignedReport(c.ctx, rep, view.DetailSummary, signer)
		if err != nil {
			return err
		}
		// Indented for a reader: the signature covers the canonical form,
		// which indenting does not change (docs/verification.md).
		var out bytes.Buffer
		if err := json.Indent(&out, doc, "", "  "); err != nil {
			return err
		}
		_, err = c.stdout.Write(out.Bytes())
		return err
	}
	v, err := view.NewReport(rep, view.DetailSummary)
	if err != nil {
		return err
	}
	return printSummary(c.stdout, v)
}

// coordinateArgs splits the positional arguments into latitude and
// longitude: "41.8 -87.6", "41.8,-87.6" or, as a shell splits an unquoted
// "41.8, -87.6", "41.8," and "-87.6".
func coordinateArgs(pos []string) ([2]string, error) {
	var parts []string
	for _, p := range pos {
		for part := range strings.SplitSeq(p, ",") {
			if part = strings.TrimSpace(part); part != "" {
				parts = append(parts, part)
			}
		}
	}
	if len(parts) != 2 || len(pos) > 2 {
		return [2]string{}, usagef("want LATITUDE LONGITUDE or LATITUDE,LONGITUDE, got %s", plural(len(pos), "argument"))
	}
	return [2]string{parts[0], parts[1]}, nil
}

// waitForJob runs a one-worker scheduler until job is final, the timeout
// passes or the command is interrupted.
func (c *cli) waitForJob(st locrisk.Store, eng *risk.Engine, log *slog.Logger, job locrisk.Job, timeout time.Duration) (locrisk.Job, error) {
	ctx, stop := context.WithCancel(c.ctx)
	sched := jobs.New(st, eng, jobs.Config{Workers: 1, Logger: log})
	stopped := make(chan struct{})
	go func() { sched.Run(ctx); close(stopped) }()
	defer func() { stop(); <-stopped }()
	sched.Notify()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(reportPollInterval)
	defer tick.Stop()
	for {
		j, err := st.GetJob(ctx, job.AccountID, job.ID)
		if err != nil && c.ctx.Err() == nil {
			return locrisk.Job{}, fmt.Errorf("reading job %s: %w", job.ID, err)
		}
		if err == nil && j.Terminal() {
			return j, nil
		}
		select {
		case <-c.ctx.Done():
			return locrisk.Job{}, fmt.Errorf("interrupted: job %s stays in the queue; a running server will finish it", job.ID)
		case <-deadline.C:
			return locrisk.Job{}, fmt.Errorf("job %s not finished after %s; it stays in the queue", job.ID, timeout)
		case <-tick.C:
		}
	}
}

// printSummary writes the summary for a person.
func printSummary(w io.Writer, v view.Report) error {
	s, l := v.Summary, v.Location
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Report\t%s (job %s, generated %s)\n", v.ReportID, v.JobID, v.GeneratedUTC)
	fmt.Fprintf(tw, "Location\t%v, %v: %s, %s (county %s)\n", l.Latitude, l.Longitude, l.CountyName, l.StateName, l.CountyFIPS)
	driver := ""
	if s.OverallDriver != "" {
		// The module behind the overall score, with its own score, so one
		// severe peril is not read as low risk (docs/methodology.md).
		driver = ", driven by " + s.OverallDriver
		if sc, ok := s.ModuleScores.Get(s.OverallDriver); ok && sc != nil {
			driver += fmt.Sprintf(" %d", *sc)
		}
	}
	fmt.Fprintf(tw, "Overall\t%d/100 %s%s (confidence %s, %.2f)\n", s.OverallScore, s.RiskLevel, driver, s.Confidence.Level, s.Confidence.Score)
	parts := make([]string, 0, len(s.ModuleScores))
	for _, m := range s.ModuleScores {
		if m.Value == nil {
			parts = append(parts, m.Module+" no data")
		} else {
			parts = append(parts, fmt.Sprintf("%s %d", m.Module, *m.Value))
		}
	}
	fmt.Fprintf(tw, "Modules\t%s\n", strings.Join(parts, ", "))
	for i, m := range s.Perils {
		label := ""
		if i == 0 {
			label = "Perils"
		}
		fmt.Fprintf(tw, "%s\t%s: %s\n", label, m.Module, perilLine(m.Value))
	}
	for i, r := range s.TopRisks {
		label := ""
		if i == 0 {
			label = "Top risks"
		}
		fmt.Fprintf(tw, "%s\t%d. %s %d (%s): %s\n", label, i+1, r.Module, r.Score, r.RiskLevel, r.Reason)
	}
	for i, r := range s.Recommendations {
		label := ""
		if i == 0 {
			label = "Recommendations"
		}
		fmt.Fprintf(tw, "%s\t[%s] %s: %s\n", label, r.Priority, r.Module, r.Text)
	}
	for i, f := range s.ReviewFlags {
		label := ""
		if i == 0 {
			label = "Review flags"
		}
		fmt.Fprintf(tw, "%s\t%s: %s\n", label, f.Code, f.Message)
	}
	if line := outlookLine(s); line != "" {
		fmt.Fprintf(tw, "Outlook\t%s\n", line)
	}
	fmt.Fprintf(tw, "Data version\t%s\n", v.DataVersion)
	return tw.Flush()
}

// outlookLine writes the summary's brief outlook for a person, or why it
// is null; "" for a report made before the outlook existed.
func outlookLine(s risk.Summary) string {
	if !s.Outlook.Set {
		return ""
	}
	b := s.Outlook.Value
	if b == nil {
		if u := s.OutlookUnavailable; u != nil {
			return u.Message
		}
		return "none for this county"
	}
	m := b.HazardMultipliers
	parts := []string{}
	for _, h := range []struct {
		name string
		v    *float64
	}{{"coastal flooding", m.CoastalFlooding}, {"drought", m.Drought}, {"extreme heat", m.ExtremeHeat}, {"hurricane", m.Hurricane}, {"wildfire", m.Wildfire}} {
		if h.v == nil {
			parts = append(parts, h.name+" none")
		} else {
			parts = append(parts, h.name+" x"+strconv.FormatFloat(*h.v, 'f', -1, 64))
		}
	}
	return "hazard multipliers, late century, higher warming (FEMA NRI Future Risk, county, context only): " + strings.Join(parts, ", ")
}

// perilLine writes a module's perils for a person: score, resolution and,
// where known, the return period of a damaging event.
func perilLine(perils []risk.Peril) string {
	parts := make([]string, 0, len(perils))
	for _, p := range perils {
		if p.Score == nil {
			parts = append(parts, strings.ToLower(p.Title)+" no data")
			continue
		}
		part := fmt.Sprintf("%s %d (%s", strings.ToLower(p.Title), *p.Score, risk.ResolutionText(p.Resolution))
		if p.ReturnPeriodYears != nil {
			part += ", about 1 in " + hazard.ReturnPeriodText(*p.ReturnPeriodYears) + " years"
			if p.ChanceOf != "" {
				part += ": " + p.ChanceOf
			}
		}
		parts = append(parts, part+")")
	}
	return strings.Join(parts, ", ")
}
