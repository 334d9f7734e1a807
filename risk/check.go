package risk

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"locrisk/risk/data"
)

// Check reports, for `locrisk data check`, every data layer the engine reads:
// whether its file is in dir, how many rows loaded, and its vintage. It loads
// the engine when every file is present, so a malformed file is reported with
// its name and line. The error is non-nil when anything is missing or broken.
func Check(ctx context.Context, dir string, w io.Writer) error {
	missing, err := data.Missing(dir)
	if err != nil {
		return err
	}
	isMissing := map[string]bool{}
	for _, s := range missing {
		isMissing[s.ID] = true
	}
	var rows map[string]int
	var loadErr error
	if len(missing) == 0 {
		var e *Engine
		if e, loadErr = Load(ctx, dir, nil, nil); loadErr == nil {
			rows = e.Rows()
		}
	}
	fmt.Fprintf(w, "data directory: %s\n\n", dir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tMODULE\tSTATUS\tROWS\tVINTAGE\tFILE")
	for _, s := range data.Catalog() {
		status, n := "ok", "-"
		switch {
		case isMissing[s.ID]:
			status = "MISSING"
		case loadErr != nil:
			status = "not loaded"
		default:
			n = fmt.Sprint(rows[s.ID])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Module, status, n, s.Version, s.Path)
	}
	tw.Flush()
	switch {
	case len(missing) > 0:
		fmt.Fprintln(w)
		return data.MissingError(dir, missing)
	case loadErr != nil:
		return loadErr
	}
	fmt.Fprintf(w, "\nall %d layers loaded\n", len(data.Catalog()))
	return nil
}
