// Package datapack is the public data pack built into the locrisk binary:
// every file the risk engine reads, as the publishers' data sets (some
// re-encoded, as each entry's origin says), with manifest.json stating for
// each its provenance, licence, rows and SHA-256. docs/data.md describes the
// data sets and how to update one; a data update changes these files and
// the manifest, never code.
package datapack

import (
	"embed"
	"io/fs"
)

//go:embed manifest.json boundaries census nri earthquake severe_weather coast_rivers flood disasters wildfire landslide environmental terrain
var files embed.FS

// FS is the embedded pack, laid out as a data folder (--data-dir) is.
func FS() fs.FS { return files }
