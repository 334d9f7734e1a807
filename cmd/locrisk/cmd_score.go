package main

// `locrisk score`: a portfolio CSV scored with the engine directly, with no
// database, quota or HTTP (docs/portfolio.md). The rows
// stream through package portfolio; this file opens the files, loads the
// engine, draws the progress bar and prints the summary.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/locrisk/locrisk/internal/portfolio"
	"github.com/locrisk/locrisk/internal/refcache"
	"github.com/locrisk/locrisk/internal/risk"
)

// progressEvery is how often the progress bar is redrawn at most.
const progressEvery = 200 * time.Millisecond

func (c *cli) score(args []string) error {
	var in, out, dataDir, refCache string
	var workers int
	var outlook bool
	f := c.newFlags("score", "--in FILE.csv --out FILE.csv [--outlook] [--data-dir DIR] [--workers N] [--reference-cache FILE]", `
Scores every row of a CSV file with the engine, as a report job would, and
writes one output row per input row, in input order. No database, quota or
server is involved, and any number of rows streams through in constant
memory.

The input needs a header row with the columns externalId, latitude and
longitude, in any order (names matched regardless of case); every other
column is passed through unchanged after the output's own columns. The
output columns are the batch CSV's (GET .../results.csv), then state,
countyFips, county and a score and a riskLevel column per peril
(module.peril). A bad row is not fatal: it gets status rejected with
errorCode invalid_latitude, invalid_longitude, unsupported_location or
invalid_row and its errorMessage. A file without a usable header exits 2.

--outlook adds the report's climate outlook after the peril columns:
outlook.countyFips, the county row of FEMA's NRI Future Risk table (December
2024, county level) that it shows, then for each hazard (coastalFlooding,
drought, extremeHeat, hurricane, wildfire) and scenario
(midCenturyLowerWarming, midCenturyHigherWarming, lateCenturyLowerWarming,
lateCenturyHigherWarming) FEMA's hazard multiplier and projected risk score,
outlook.<hazard>.<scenario>.hazardMultiplier and .riskScore, empty where
FEMA gives none. They are context and change no score
(docs/methodology.md, Outlook).

Loading the data builds the population-weighted reference, several
seconds; --reference-cache FILE keeps it in FILE so that later runs on the
same data read it back instead.

"-" reads standard input or writes standard output. A file given to
--out is written beside itself and renamed into place when complete. A
progress bar is drawn on standard error when it is a terminal; a summary
is always printed there at the end. Exit status 1 if the engine failed on
any row (status failed) or the run was cut short.`, `
  locrisk score --in portfolio.csv --out scored.csv
  locrisk score --outlook --in portfolio.csv --out scored.csv
  locrisk score --in - --out - < portfolio.csv > scored.csv
  locrisk score --data-dir ./pack --reference-cache ref.cache --in portfolio.csv --out scored.csv`)
	f.StringVar(&in, "in", "", "input CSV `file`, or - for standard input (required)")
	f.StringVar(&out, "out", "", "output CSV `file`, or - for standard output (required)")
	f.StringVar(&dataDir, "data-dir", "", dataFlagUsage)
	f.IntVar(&workers, "workers", runtime.NumCPU(), "rows scored side by side")
	f.StringVar(&refCache, "reference-cache", "", "keep the engine's reference distributions in `file` between runs")
	f.BoolVar(&outlook, "outlook", false, "add the climate outlook's columns (FEMA NRI Future Risk, county level)")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	switch {
	case in == "":
		return usagef("--in is required (a CSV file, or - for standard input)")
	case out == "":
		return usagef("--out is required (a CSV file, or - for standard output)")
	case workers < 1:
		return usagef("--workers must be at least 1")
	}

	src := c.stdin
	var size int64 // of the input file, for the bar's percentage; 0 unknown
	if in != "-" {
		fin, err := os.Open(in)
		if err != nil {
			return fmt.Errorf("opening the input: %w", err)
		}
		defer fin.Close()
		if st, err := fin.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		src = fin
	}
	// The header first, so a file that cannot be scored is refused before
	// the engine takes its seconds to load.
	input, err := portfolio.OpenWith(src, portfolio.Columns{Outlook: outlook})
	var he *portfolio.HeaderError
	if errors.As(err, &he) {
		return usagef("%s: %s", in, he.Msg)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", in, err)
	}
	if d := input.Dropped(); len(d) > 0 {
		fmt.Fprintf(c.stderr, "locrisk score: input column(s) %s left out: the output has its own\n", strings.Join(d, ", "))
	}

	// The output next, so a place it cannot go to is found before the load.
	dst, commit, discard, err := c.scoreOutput(out)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			discard()
		}
	}()

	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dataFS, dataName, err := checkedDataPack(dataDir)
	if err != nil {
		return err
	}
	if isTerminal(c.stderr) {
		fmt.Fprintf(c.stderr, "loading %s ...\n", dataName)
	}
	loadStart := time.Now()
	var cache risk.ReferenceCache // none: build the reference
	if refCache != "" {
		cache = refcache.File{Path: refCache}
	}
	eng, err := risk.Load(c.ctx, dataFS, log, cache)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", dataName, err)
	}
	loaded := time.Since(loadStart)

	bar := newProgressBar(c.stderr, size)
	start := time.Now()
	sum, err := input.Score(c.ctx, eng, dst, portfolio.Options{Workers: workers, Progress: bar.update})
	elapsed := time.Since(start)
	bar.finish()
	if err == nil {
		committed = true
		err = commit()
	}
	printScoreSummary(c.stderr, sum, loaded, elapsed)
	switch {
	case err != nil && c.ctx.Err() != nil && out == "-":
		return fmt.Errorf("interrupted after %d rows: the output is incomplete", sum.Rows)
	case err != nil && c.ctx.Err() != nil:
		return fmt.Errorf("interrupted after %d rows; %s was not written", sum.Rows, out)
	case err != nil:
		return err
	case sum.Failed > 0:
		return fmt.Errorf("the engine failed on %d rows (status failed in the output)", sum.Failed)
	}
	return nil
}

// scoreOutput opens the output: standard output, or a temporary file in
// the target's directory that commit renames into place, so a run cut
// short never leaves a file that passes for complete (and --out may name
// the input file).
func (c *cli) scoreOutput(out string) (w io.Writer, commit func() error, discard func(), err error) {
	if out == "-" {
		return c.stdout, func() error { return nil }, func() {}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating the output: %w", err)
	}
	discard = func() { tmp.Close(); os.Remove(tmp.Name()) }
	commit = func() error {
		if err := tmp.Chmod(0o644); err != nil {
			discard()
			return fmt.Errorf("writing the output: %w", err)
		}
		if err := tmp.Close(); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("writing the output: %w", err)
		}
		if err := os.Rename(tmp.Name(), out); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("writing the output: %w", err)
		}
		return nil
	}
	return tmp, commit, discard, nil
}

// printScoreSummary writes the end-of-run summary for a person.
func printScoreSummary(w io.Writer, s portfolio.Summary, loaded, elapsed time.Duration) {
	rejected := 0
	codes := make([]string, 0, len(s.Rejected))
	for code, n := range s.Rejected {
		rejected += n
		codes = append(codes, code)
	}
	slices.Sort(codes)
	reasons := make([]string, len(codes))
	for i, code := range codes {
		reasons[i] = fmt.Sprintf("%s %d", code, s.Rejected[code])
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(s.Rows) / elapsed.Seconds()
	}
	fmt.Fprintf(w, "rows      %d\nscored    %d\nrejected  %d", s.Rows, s.Scored, rejected)
	if len(reasons) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(reasons, ", "))
	}
	fmt.Fprintf(w, "\nfailed    %d\nelapsed   %s scoring, %s loading the data\nrate      %.0f rows/s\n",
		s.Failed, elapsed.Round(time.Millisecond), loaded.Round(time.Millisecond), rate)
}

// progressBar draws a one-line progress bar on a terminal; on anything
// else it draws nothing.
type progressBar struct {
	w     io.Writer
	on    bool
	size  int64 // input bytes, 0 when unknown (standard input)
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, size int64) *progressBar {
	return &progressBar{w: w, on: isTerminal(w), size: size, start: time.Now()}
}

// isTerminal reports whether w is a character device (a terminal), which
// a Stat of the file tells without a terminal library.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progressBar) update(rows int, read int64) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	rate := float64(rows) / now.Sub(p.start).Seconds()
	if p.size > 0 {
		frac := min(float64(read)/float64(p.size), 1)
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(p.w, "\r[%s%s] %3.0f%%  %d rows  %.0f rows/s ", strings.Repeat("#", n), strings.Repeat(".", width-n), frac*100, rows, rate)
	} else {
		fmt.Fprintf(p.w, "\r%d rows  %.0f rows/s ", rows, rate)
	}
	p.drawn = true
}

// finish clears the bar's line, so the summary starts on a clean one.
func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r\033[K")
	}
}
