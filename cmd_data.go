package main

// `locrisk data check` and `data validate`: the public data sets, without
// a database.

import (
	"fmt"

	"locrisk/risk"
)

func (c *cli) dataCheck(args []string) error {
	var dir string
	f := c.newFlags("data check", "--data-dir DIR", `
Lists every public data set the engine reads: whether its file is present
in the data directory, how many rows it loads, and its vintage; a missing
file is named with where its publisher offers it; a malformed file is its
layer's MALFORMED, with the file and line after the table, while the other
layers still load. Exits 1 if anything is missing or malformed. --data-dir is required (or set LOCRISK_DATA_DIR).`, `
  locrisk data check --data-dir ../shared/data
  LOCRISK_DATA_DIR=../shared/data locrisk data check`)
	f.StringVar(&dir, "data-dir", "", "`directory` holding the public data sets (required)")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if dir == "" {
		return usagef("--data-dir (or LOCRISK_DATA_DIR) is required")
	}
	return risk.Check(c.ctx, dir, c.stdout)
}

func (c *cli) dataValidate(args []string) error {
	var dir string
	f := c.newFlags("data validate", "--data-dir DIR", `
Scores the validation table of well-known US places (docs/methodology.md,
"Validation") and prints each place's overall, module and peril scores,
then every ordering or low that fails and every known gap of the data.
Exits 1 if a check fails. It builds the population-weighted reference
itself, which takes a few seconds. --data-dir is required (or set
LOCRISK_DATA_DIR).`, `
  locrisk data validate --data-dir ../shared/data`)
	f.StringVar(&dir, "data-dir", "", "`directory` holding the public data sets (required)")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if dir == "" {
		return usagef("--data-dir (or LOCRISK_DATA_DIR) is required")
	}
	eng, err := risk.Load(c.ctx, dir, nil, nil)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", dir, err)
	}
	res, err := eng.Validate(c.ctx, c.stdout)
	if err != nil {
		return err
	}
	if len(res.Failures) > 0 {
		return fmt.Errorf("%d of %d validation checks fail", len(res.Failures), res.Checks)
	}
	return nil
}
