package main

// `locrisk data check`, `data validate`, `data info`, `data verify`,
// `data export` and `data fetch`: the public data sets, without a
// database.

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/validation"
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
