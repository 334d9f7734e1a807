package risk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"locrisk/risk/data"
)

// Check reports, for `locrisk data check`, every data layer the engine reads:
// whether its file is in dir, how many rows loaded, and its vintage. When
// every file is present it reads every layer, all of them even when one
// fails, so a malformed file is shown as its own layer (MALFORMED, with the
// file and line below the table) beside the layers that loaded (ok, with
// their rows); a sound file read by the same module as a broken one is "not
// loaded". The error is non-nil when anything is missing or broken.
func Check(ctx context.Context, dir string, w io.Writer) error {
	missing, err := data.Missing(dir)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		// A data pack must match its manifest, as for every load.
		if _, err := verifiedVersion(dir); err != nil {
			return err
		}
	}
	isMissing := map[string]bool{}
	for _, s := range missing {
		isMissing[s.ID] = true
	}
	e := &Engine{rows: map[string]int{}, specs: Registry()}
	var loadErrs []error
	if len(missing) == 0 {
		_, loadErrs = e.loadLayers(ctx, dir)
	}
	fmt.Fprintf(w, "data directory: %s\n\n", dir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tMODULE\tSTATUS\tROWS\tVINTAGE\tFILE")
	for _, s := range data.Catalog() {
		status, n := "ok", "-"
		rows, loaded := e.rows[s.ID]
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Module, status, n, s.Version, s.Path)
	}
	tw.Flush()
	switch {
	case len(missing) > 0:
		fmt.Fprintln(w)
		return data.MissingError(dir, missing)
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
