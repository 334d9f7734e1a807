package risk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// Check reports, for `locrisk data check`, every data layer the engine reads:
// whether its file is in the pack fsys, how many rows loaded, and its vintage. When
// every file is present it reads every layer, all of them even when one
// fails, so a malformed file is shown as its own layer (MALFORMED, with the
// file and line below the table) beside the layers that loaded (ok, with
// their rows); a sound file read by the same module as a broken one is "not
// loaded". The error is non-nil when anything is missing or broken.
func Check(ctx context.Context, fsys fs.FS, w io.Writer) error {
	m, err := data.ReadManifest(fsys)
	if err != nil {
		return err
	}
	isMissing := map[string]bool{}
	missing := m.Missing(fsys)
	for _, x := range missing {
		for _, f := range m.Files {
			if f.Path == x.Path {
				isMissing[f.SourceID] = true
			}
		}
	}
	e := &Engine{rows: map[string]int{}, specs: Registry(), manifest: m}
	var loadErrs []error
	if len(missing) == 0 {
		// Every file must match the manifest, as for every load.
		pack, err := data.CheckPack(fsys)
		if err != nil {
			return err
		}
		_, loadErrs = e.loadLayers(ctx, pack)
	}
	fmt.Fprintf(w, "data version: %s\n\n", m.Version())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tMODULE\tSTATUS\tROWS\tVINTAGE\tFILE")
	for _, s := range data.Catalog() {
		status, n := "ok", "-"
		rows, loaded := e.rows[s.ID]
		entry, _ := m.Entry(s.ID)
		switch {
		case isMissing[s.ID]:
			status = "MISSING"
		case namedIn(loadErrs, s.Path):
			status = "MALFORMED"
		case !loaded:
			status = "not loaded"
		default:
			n = fmt.Sprint(rows)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Module, status, n, entry.Vintage, entry.Path)
	}
	tw.Flush()
	switch {
	case len(missing) > 0:
		fmt.Fprintln(w)
		return data.MismatchError(missing)
	case len(loadErrs) > 0:
		fmt.Fprintln(w)
		return errors.Join(loadErrs...)
	}
	fmt.Fprintf(w, "\nall %d layers loaded\n", len(data.Catalog()))
	return nil
}

// namedIn reports whether one of errs names the file at path (its base
// name, or that of its uncompressed copy).
func namedIn(errs []error, path string) bool {
	base := filepath.Base(path)
	plain := strings.TrimSuffix(base, ".gz")
	for _, err := range errs {
		msg := err.Error()
		if strings.Contains(msg, base) || (plain != base && strings.Contains(msg, plain)) {
			return true
		}
	}
	return false
}
