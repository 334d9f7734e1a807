package main

import (
	"fmt"
	"io/fs"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/risk/data"
)

// builtInData names the pack embedded in the binary in messages.
const builtInData = "the built-in data"

// dataFlagUsage is the --data-dir flag's help, the same for every command
// that reads the data (docs/data.md).
const dataFlagUsage = "`directory` holding a data pack to use instead of the built-in data (docs/data.md)"

// dataPack is the data pack a command reads: the folder --data-dir (or
// LOCRISK_DATA_DIR) names, else the pack built into the binary, and a name
// for it in messages.
func dataPack(dir string) (fs.FS, string, error) {
	if dir == "" {
		return datapack.FS(), builtInData, nil
	}
	fsys, err := data.DirFS(dir)
	return fsys, dir, err
}

// checkedDataPack is dataPack with every file checked against the
// manifest, before a command creates anything (a database, a key); the
// engine does not read the pack a second time for it.
func checkedDataPack(dir string) (fs.FS, string, error) {
	fsys, name, err := dataPack(dir)
	if err != nil {
		return nil, "", fmt.Errorf("loading data from %s: %w", name, err)
	}
	checked, err := data.CheckPack(fsys)
	if err != nil {
		return nil, "", fmt.Errorf("loading data from %s: %w", name, err)
	}
	return checked, name, nil
}
