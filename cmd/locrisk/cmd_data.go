package main

// `locrisk data check`, `data validate`, `data info`, `data verify`,
// `data export`, `data fetch`, `data replace`, `data manifest` and `data
// diff`: the public data sets, without a database.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/batchcsv"
	"github.com/locrisk/locrisk/internal/portfolio"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/validation"
	"github.com/locrisk/locrisk/internal/view"
)

func (c *cli) dataCheck(args []string) error {
	var dir string
	f := c.newFlags("data check", "[--data-dir DIR]", `
Loads every public data set the engine reads, from the built-in data or
the pack in --data-dir, and lists for each its vintage, how many rows it
loads and its file. A file missing from the pack, or not matching its
manifest, is named; a malformed file is its layer's MALFORMED, with the
file and line after the table, while the other layers still load. Exits 1
if anything is missing, changed or malformed.`, `
  locrisk data check
  locrisk data check --data-dir ./pack`)
	f.StringVar(&dir, "data-dir", "", dataFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	fsys, name, err := dataPack(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "data: %s\n", name)
	if err := risk.Check(c.ctx, fsys, c.stdout); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (c *cli) dataValidate(args []string) error {
	var dir string
	f := c.newFlags("data validate", "[--data-dir DIR]", `
Scores the validation table of well-known US places (docs/methodology.md,
"Validation") and prints each place's overall, module and peril scores,
then every ordering or low that fails and every known gap of the data.
Exits 1 if a check fails. It builds the population-weighted reference
itself, which takes a few seconds.`, `
  locrisk data validate
  locrisk data validate --data-dir ./pack`)
	f.StringVar(&dir, "data-dir", "", dataFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	fsys, name, err := dataPack(dir)
	if err != nil {
		return err
	}
	eng, err := risk.Load(c.ctx, fsys, nil, nil)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", name, err)
	}
	fmt.Fprintf(c.stdout, "data: %s (version %s), methodology %s\n\n", name, eng.DataVersion(), risk.MethodologyVersion)
	res, err := validation.Run(c.ctx, eng, c.stdout)
	if err != nil {
		return err
	}
	if len(res.Failures) > 0 {
		return fmt.Errorf("%d of %d validation checks fail", len(res.Failures), res.Checks)
	}
	return nil
}

func (c *cli) dataInfo(args []string) error {
	_, name, m, err := c.packCommand("data info", `
Prints the manifest of the data pack (docs/data.md), the built-in one or
the one in --data-dir: its data version and manifest digest, derived from
the files' paths and checksums (docs/verification.md), and for every file its source, vintage, licence, size and rows,
then the attributions the licences and publishers ask for. It reads only
the manifest; data verify checks the files against it.`, `
  locrisk data info
  locrisk data info --data-dir ./pack`, args)
	if err != nil {
		return err
	}
	var total int64
	for _, x := range m.Files {
		total += x.Bytes
	}
	fmt.Fprintf(c.stdout, "data pack: %s\nversion: %s\nfiles: %d, %s bytes\nmanifest digest: %s\n\n", name, m.Version(), len(m.Files), strconv.FormatInt(total, 10), m.Digest())
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tVINTAGE\tLICENCE\tBYTES\tROWS\tFILE")
	for _, x := range m.Files {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", x.SourceID, x.Vintage, shortLicence(x.Licence), x.Bytes, x.Rows, x.Path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, "\nlicences:")
	for _, x := range m.Files {
		fmt.Fprintf(c.stdout, "  %s: %s\n", x.SourceID, x.Licence)
	}
	first := true
	for _, x := range m.Files {
		if x.Attribution == "" {
			continue
		}
		if first {
			fmt.Fprintln(c.stdout, "\nattributions:")
			first = false
		}
		fmt.Fprintf(c.stdout, "  %s: %s\n", x.SourceID, x.Attribution)
	}
	return nil
}

// shortLicence is a licence statement's first clause, for a table column;
// data info prints every statement in full below the table.
func shortLicence(s string) string {
	if i := strings.IndexAny(s, ";("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func (c *cli) dataVerify(args []string) error {
	fsys, name, m, err := c.packCommand("data verify", `
Checks every file of the data pack, the built-in one or the one in
--data-dir, against its manifest (size and SHA-256, docs/data.md) and names
each file that is missing or differs, with the checksum it has. Exits 1 if
any does, or if the folder has no manifest. The engine makes the same check
whenever it loads data.`, `
  locrisk data verify
  locrisk data verify --data-dir ./pack`, args)
	if err != nil {
		return err
	}
	bad, err := m.Verify(fsys)
	if err != nil {
		return err
	}
	for _, x := range bad {
		fmt.Fprintf(c.stdout, "MISMATCH  %s: %s\n", x.Path, x.Problem)
	}
	// Files the manifest does not list are not read; say so, since a
	// replaced file put under a new name without its entry is one.
	unlisted, err := m.Unlisted(fsys)
	if err != nil {
		return err
	}
	for _, p := range unlisted {
		fmt.Fprintf(c.stdout, "NOT LISTED  %s: not in the manifest, so never read\n", p)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d files do not match the manifest of %s", len(bad), len(m.Files), name)
	}
	fmt.Fprintf(c.stdout, "ok: %d files match the manifest of %s (version %s)\n", len(m.Files), name, m.Version())
	return nil
}

// packCommand parses the flags of a command on the data pack (the
// built-in one, or the one in --data-dir) and reads the pack's manifest.
func (c *cli) packCommand(name, help, examples string, args []string) (fs.FS, string, *data.Manifest, error) {
	var dir string
	f := c.newFlags(name, "[--data-dir DIR]", help, examples)
	f.StringVar(&dir, "data-dir", "", dataFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return nil, "", nil, err
	}
	fsys, where, err := dataPack(dir)
	if err != nil {
		return nil, "", nil, err
	}
	m, err := data.ReadManifest(fsys)
	if err != nil {
		return nil, "", nil, fmt.Errorf("%s: %w", where, err)
	}
	return fsys, where, m, nil
}

func (c *cli) dataExport(args []string) error {
	f := c.newFlags("data export", "DIR", `
Writes the data pack built into this binary, its manifest and every data
file, to the folder DIR, so that the files can be inspected, or replaced
by a newer release of a data set and served with --data-dir DIR after the
manifest is updated to match (docs/data.md). DIR must be new or empty; the
files are written beside it and moved into place once all of them match
the manifest, so a failure leaves nothing half written.`, `
  locrisk data export ./pack
  locrisk data verify --data-dir ./pack`)
	rest, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] == "" {
		return usagef("give the folder to write the pack to, once")
	}
	m, err := data.Export(datapack.FS(), rest[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "exported data pack %s (%d files and %s) to %s\n", m.Version(), len(m.Files), data.ManifestName, rest[0])
	return nil
}

func (c *cli) dataFetch(args []string) error {
	var dir, sum string
	var timeout time.Duration
	f := c.newFlags("data fetch", "URL --sha256 SUM --data-dir DIR", `
Downloads the data pack archive at URL (a .tar.gz of manifest.json and the
data files, docs/data.md), checks that it arrived whole and that its
SHA-256 is SUM, unpacks it beside DIR and verifies every file against the
pack's manifest; only then does it replace DIR with it. DIR must be new,
an empty folder or a data pack; anything else (a file, a link, another
folder) is refused. Any failure leaves DIR as it was. Serve the new folder
with --data-dir DIR.`, `
  locrisk data fetch https://data.example.org/locrisk-data-2026.tar.gz --sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 --data-dir ./pack`)
	f.StringVar(&dir, "data-dir", "", "`directory` to install the pack in (required; replaced when the new pack checks out)")
	f.StringVar(&sum, "sha256", "", "the archive's expected SHA-256, 64 hex digits (required)")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	rest, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("give the pack's URL, once")
	}
	if dir == "" || sum == "" {
		return usagef("--data-dir and --sha256 are required")
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	m, leftover, err := data.Fetch(ctx, &http.Client{}, rest[0], sum, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "installed data pack %s (%d files) in %s\n", m.Version(), len(m.Files), dir)
	if leftover != "" {
		fmt.Fprintf(c.stderr, "the previous pack, moved to %s, could not be removed: delete it by hand\n", leftover)
	}
	return nil
}

func (c *cli) dataReplace(args []string) error {
	var entry, with, as, vintage, origin, rowsNote, licence, attribution string
	var rows int
	f := c.newFlags("data replace", "DIR --file PATH --with FILE --vintage V --origin TEXT --rows N [--as PATH]", `
Puts FILE in the data pack folder DIR (one data export wrote, say) in
place of the file --file names, by its path in the pack or its source id,
and rewrites the pack's manifest (docs/data.md): the entry's size and
SHA-256, and the new file's vintage, origin and rows, which a new release
must state; its licence, attribution and rows note stay unless given. The
pack then verifies, under a new data version. --as puts the new file
under another path in the pack (a newer file may carry its date in its
name) and removes the old one. The new file must keep the columns the
engine reads: load the pack with data check, and see what it changes with
data diff, before serving it with --data-dir DIR. The pack folder is
given as an argument, never taken from LOCRISK_DATA_DIR, so the data a
server reads are not changed by mistake.`, `
  locrisk data replace ./pack --file epa-superfund-npl --with superfund-2026-10.csv --vintage 2026-10 --origin "EPA Superfund NPL sites, export of 2026-10-01" --rows 1830
  locrisk data manifest ./pack`)
	f.StringVar(&entry, "file", "", "the file to replace: its `path` in the pack or its source id (required)")
	f.StringVar(&with, "with", "", "the new `file` (required)")
	f.StringVar(&as, "as", "", "put the new file under this `path` in the pack (default: the old file's path)")
	f.StringVar(&vintage, "vintage", "", "the new file's vintage, which reports cite (required)")
	f.StringVar(&origin, "origin", "", "where the new file came from and how it was converted (required)")
	f.IntVar(&rows, "rows", 0, "how many records the new file holds (required)")
	f.StringVar(&rowsNote, "rows-note", "", "how the rows were counted (default: the old note)")
	f.StringVar(&licence, "licence", "", "the new file's licence (default: the old one)")
	f.StringVar(&attribution, "attribution", "", "what the licence or publisher asks to be kept (default: the old one)")
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	switch {
	case len(pos) != 1 || pos[0] == "":
		return usagef("give the pack folder, once")
	case entry == "" || with == "":
		return usagef("--file and --with are required")
	case vintage == "" || origin == "" || !given["rows"]:
		return usagef("--vintage, --origin and --rows are required: they state what the new file is")
	}
	r := data.Replacement{Entry: entry, From: with, As: as, Vintage: vintage, Origin: origin, Rows: rows}
	if given["rows-note"] {
		r.RowsNote = &rowsNote
	}
	if given["licence"] {
		r.Licence = &licence
	}
	if given["attribution"] {
		r.Attribution = &attribution
	}
	dir := pos[0]
	before, err := data.ReadManifest(os.DirFS(dir))
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	old, m, err := data.Replace(dir, r)
	if err != nil {
		return err
	}
	now, _ := m.Entry(old.SourceID)
	fmt.Fprintf(c.stdout, "replaced %s (%s): %s, %d bytes, sha256 %s\n", old.SourceID, old.Path, now.Path, now.Bytes, now.SHA256)
	fmt.Fprintf(c.stdout, "data version %s -> %s\n", before.Version(), m.Version())
	return c.verifyFolder(dir, m)
}

func (c *cli) dataManifest(args []string) error {
	f := c.newFlags("data manifest", "DIR", `
Rewrites the manifest of the data pack folder DIR after its files or
their entries were edited by hand (docs/data.md): every entry's size and
SHA-256 from its file as it is now, so the pack verifies under its new
data version. Entries are not otherwise changed: state a new file's path,
vintage, origin and rows in its entry (data replace does it all for one
file). A listed file that is missing is refused and nothing is written;
files the manifest does not list are named, since the engine never reads
them.`, `
  locrisk data manifest ./pack
  locrisk data verify --data-dir ./pack`)
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] == "" {
		return usagef("give the pack folder, once")
	}
	dir := pos[0]
	before, after, err := data.Rehash(dir)
	if err != nil {
		return err
	}
	n := 0
	for i := range after.Files {
		if b, a := before.Files[i], after.Files[i]; b != a {
			n++
			fmt.Fprintf(c.stdout, "updated %s: %d bytes, sha256 %s\n", a.Path, a.Bytes, a.SHA256)
		}
	}
	if n == 0 {
		fmt.Fprintf(c.stdout, "the manifest of %s already matches its files (version %s)\n", dir, after.Version())
	} else {
		fmt.Fprintf(c.stdout, "%s, data version %s -> %s\n", plural(n, "entry"), before.Version(), after.Version())
	}
	return c.verifyFolder(dir, after)
}

// verifyFolder names the files of the pack folder dir its manifest m does
// not list (never read), and fails if any listed file differs.
func (c *cli) verifyFolder(dir string, m *data.Manifest) error {
	fsys := os.DirFS(dir)
	unlisted, err := m.Unlisted(fsys)
	if err != nil {
		return err
	}
	for _, p := range unlisted {
		fmt.Fprintf(c.stdout, "NOT LISTED  %s: not in the manifest, so never read\n", p)
	}
	bad, err := m.Verify(fsys)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return data.MismatchError(bad)
	}
	fmt.Fprintf(c.stdout, "ok: %d files match the manifest of %s\n", len(m.Files), dir)
	return nil
}

func (c *cli) dataDiff(args []string) error {
	var in, out, newDir, oldDir string
	var minChange, workers int
	f := c.newFlags("data diff", "--in FILE.csv [--data-dir NEW] [--from OLD] [--min-score-change N] [--out CHANGED.csv]", `
A dry run of a data update before it is served: scores every row of a
CSV file (the input of locrisk score: externalId, latitude, longitude)
with the data now served (--from, the built-in data if not given) and
with the new pack (--data-dir), compares each row's two reports as GET
.../reports/{id}/changes compares two reports (docs/api.md, Report
changes), and prints how many rows would change, and how many materially,
overall and module by module. A change is material when a risk level
changes or a score moves by --min-score-change or more. --out writes, in
input order, a CSV of the rows that would change materially and of those
one pack covers and the other does not: rowNumber, externalId, latitude,
longitude, change (material or coverage), materialModules, the overall
score and level before and after, and each module's score before and
after. Both sides are scored by this binary, so only the data differ.

Both packs are loaded, each building its reference (several seconds and
about 200 MB each for the full data). Bad rows are counted as locrisk
score counts them. "-" reads standard input, or for --out writes
standard output (the counts then go to standard error). Exit status 0
when every row was compared, whatever changed; 1 if the engine failed on
a row or the run was cut short.`, `
  locrisk data diff --data-dir ./pack --in portfolio.csv
  locrisk data diff --data-dir ./pack --in portfolio.csv --min-score-change 10 --out changed.csv`)
	f.StringVar(&in, "in", "", "input CSV `file`, or - for standard input (required)")
	f.StringVar(&newDir, "data-dir", "", "`directory` holding the new data pack (default: the built-in data)")
	f.StringVar(&oldDir, "from", "", "`directory` holding the data pack served now (default: the built-in data)")
	f.IntVar(&minChange, "min-score-change", view.DefaultMinScoreChange, "the score move, 1 to 100, from which a change is material")
	f.StringVar(&out, "out", "", "write the rows that change materially to this CSV `file`, or - for standard output")
	f.IntVar(&workers, "workers", runtime.NumCPU(), "rows scored side by side")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	switch {
	case in == "":
		return usagef("--in is required (a CSV file, or - for standard input)")
	case minChange < 1 || minChange > 100:
		return usagef("--min-score-change must be from 1 to 100")
	case workers < 1:
		return usagef("--workers must be at least 1")
	}
	report := c.stdout
	if out == "-" {
		report = c.stderr
	}

	src := c.stdin
	if in != "-" {
		fin, err := os.Open(in)
		if err != nil {
			return fmt.Errorf("opening the input: %w", err)
		}
		defer fin.Close()
		src = fin
	}
	input, err := portfolio.Open(src)
	var he *portfolio.HeaderError
	if errors.As(err, &he) {
		return usagef("%s: %s", in, he.Msg)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", in, err)
	}
	dst, commit, discard := io.Writer(io.Discard), func() error { return nil }, func() {}
	if out != "" {
		if dst, commit, discard, err = c.scoreOutput(out); err != nil {
			return err
		}
	}
	committed := false
	defer func() {
		if !committed {
			discard()
		}
	}()

	oldFS, oldName, err := checkedDataPack(oldDir)
	if err != nil {
		return err
	}
	newFS, newName, err := checkedDataPack(newDir)
	if err != nil {
		return err
	}
	oldVersion, newVersion := oldFS.(*data.Checked).Manifest.Version(), newFS.(*data.Checked).Manifest.Version()
	fmt.Fprintf(report, "from %s (%s) to %s (%s), methodology %s\n", oldName, oldVersion, newName, newVersion, risk.MethodologyVersion)
	if oldVersion == newVersion {
		fmt.Fprintln(report, "the two packs hold the same data: no report would change")
		committed = true
		if out != "" {
			w := batchcsv.NewWriter(dst)
			if err := w.Write(portfolio.DiffHeader()); err != nil {
				return err
			}
			if w.Flush(); w.Error() != nil {
				return fmt.Errorf("writing the output: %w", w.Error())
			}
		}
		return commit()
	}
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	oldEng, err := risk.Load(c.ctx, oldFS, log, nil)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", oldName, err)
	}
	newEng, err := risk.Load(c.ctx, newFS, log, nil)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", newName, err)
	}
	sum, err := input.Diff(c.ctx, oldEng, newEng, minChange, dst, portfolio.Options{Workers: workers})
	if err == nil {
		committed = true
		err = commit()
	}
	printDiffSummary(report, sum)
	switch {
	case err != nil && c.ctx.Err() != nil:
		return fmt.Errorf("interrupted after %d rows: the counts are incomplete", sum.Rows)
	case err != nil:
		return err
	case sum.Failed > 0:
		return fmt.Errorf("the engine failed on %d rows, which are not compared", sum.Failed)
	}
	if out != "" && out != "-" {
		fmt.Fprintf(report, "\n%s written to %s\n", plural(sum.Material+sum.Coverage, "row"), out)
	}
	return nil
}

// printDiffSummary writes data diff's counts for a person.
func printDiffSummary(w io.Writer, s portfolio.DiffSummary) {
	rejected := 0
	for _, n := range s.Rejected {
		rejected += n
	}
	fmt.Fprintf(w, "rows: %d read, %d compared, %d rejected, %d failed, %d covered by one pack only\n",
		s.Rows, s.Scored, rejected, s.Failed, s.Coverage)
	fmt.Fprintf(w, "would change: %d rows, materially %d (a risk level changes, or a score moves by %d or more)\n\n",
		s.Changed, s.Material, s.MinScoreChange)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tCHANGED\tMATERIALLY")
	fmt.Fprintf(tw, "overall\t%d\t%d\n", s.Overall.Changed, s.Overall.Material)
	for _, m := range s.ModuleCounts() {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", m.Module, m.Changed, m.Material)
	}
	tw.Flush()
}
