// Command terrainpack makes the two terrain files of the data pack from the
// publishers' files, reproducibly (the same input gives the same bytes):
//
//	terrainpack tiles DIR OUT.zip
//	    DIR holds the SRTM30_PLUS web-map tiles as 6/{x}/{y}.png; they are
//	    stored unchanged (no recompression) in OUT.zip as entries "6/x/y.png",
//	    ordered by x then y, with zero modification times.
//	terrainpack etopo ETOPO5.cdf[.gz] OUT.grd.gz
//	    reads the netCDF classic file's variable ROSE (float32 [lat][lon],
//	    rows from 90°S northward, columns from 0°E eastward, 1/12 degree),
//	    checks its axes, and writes the blocks listed in regions (the area
//	    the service covers plus a margin) as whole metres in the grid file
//	    format of package terrain (terrain.WriteGrids), gzipped, each
//	    column placed 7.5 arc-minutes east of the file's axis (lonShift).
//
// Nothing here depends on where the files lie: paths are arguments.
package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/terrain"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 4 && os.Args[1] == "tiles":
		err = zipTiles(os.Args[2], os.Args[3])
	case len(os.Args) == 4 && os.Args[1] == "etopo":
		err = clipETOPO5(os.Args[2], os.Args[3])
	default:
		err = errors.New("usage: terrainpack tiles DIR OUT.zip | terrainpack etopo ETOPO5.cdf[.gz] OUT.grd.gz")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "terrainpack:", err)
		os.Exit(1)
	}
}

type tile struct{ z, x, y int }

func zipTiles(dir, out string) error {
	var tiles []tile
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".png") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		parts := strings.Split(filepath.ToSlash(strings.TrimSuffix(rel, ".png")), "/")
		if len(parts) != 3 {
			return fmt.Errorf("%s: not z/x/y.png", rel)
		}
		var t tile
		for i, dst := range []*int{&t.z, &t.x, &t.y} {
			if *dst, err = strconv.Atoi(parts[i]); err != nil {
				return fmt.Errorf("%s: not z/x/y.png", rel)
			}
		}
		tiles = append(tiles, t)
		return nil
	})
	if err != nil {
		return err
	}
	if len(tiles) == 0 {
		return fmt.Errorf("%s: no z/x/y.png tiles", dir)
	}
	slices.SortFunc(tiles, func(a, b tile) int {
		if a.z != b.z {
			return a.z - b.z
		}
		if a.x != b.x {
			return a.x - b.x
		}
		return a.y - b.y
	})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, t := range tiles {
		name := fmt.Sprintf("%d/%d/%d.png", t.z, t.x, t.y)
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d tiles, %d bytes\n", len(tiles), buf.Len())
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// region is a block to keep, in whole twelfths of a degree (ETOPO5 grid
// points), inclusive; west may exceed 180°E to run across the antimeridian.
type region struct {
	name                     string
	south, north, west, east float64 // degrees
}

// regions: the extent of the covered area (internal/risk/coverage) with
// about 1 degree of margin.
var regions = []region{
	{"conus", 23, 50.5, -126, -65.5},
	{"alaska", 50.5, 72, 171, 231}, // Aleutians from 172.4°E, across 180° to 130°W
	{"hawaii", 18, 29, -179, -154}, // main islands and the Northwestern chain
	{"puerto-rico-virgin-islands", 17, 19.5, -68.5, -64},
	{"guam-northern-mariana-islands", 12.5, 21, 144, 147},
	{"american-samoa", -15.5, -10.5, -172, -167.5},
}

// lonShift corrects the registration of this copy of ETOPO5: its features
// lie 1.5 columns (7.5 arc-minutes) west of where they are. Measured
// against the SRTM30_PLUS tiles over the conterminous US (coastlines of
// Florida and San Francisco; RMSE at land grid points 163 m as read, 62 m
// with the shift, worse at 1.25 or 1.75 columns) and consistent with the
// summits of Mt. Rainier, Mauna Loa and Denali. Column c of the file is
// written at longitude c/12 + lonShift.
const lonShift = 1.5 / 12

func clipETOPO5(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return err
		}
	}
	grids, err := clip(raw, regions)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // no name, zero time: reproducible
	comment := "NOAA/NGDC ETOPO5 (1993), variable ROSE, metres; elevation of land, depth of sea as negative.\n" +
		"Clipped to the area locrisk covers by internal/risk/terrain/cmd/terrainpack (terrainpack etopo).\n" +
		"Grid points every 5 arc-minutes; values unchanged except rounding to whole metres.\n" +
		"Longitudes are the file's plus 7.5 arc-minutes (1.5 columns), correcting its registration (terrainpack's lonShift)."
	if err := terrain.WriteGrids(zw, comment, grids); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	cells := 0
	for _, g := range grids {
		cells += g.Rows * g.Cols
	}
	fmt.Fprintf(os.Stderr, "%d blocks, %d cells, %d bytes\n", len(grids), cells, buf.Len())
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// clip checks the file is the ETOPO5 layout and cuts the regions out of it.
func clip(raw []byte, regions []region) ([]terrain.Grid, error) {
	h, err := parseNetCDFHeader(raw)
	if err != nil {
		return nil, err
	}
	v, ok := h.variable("ROSE")
	if !ok || v.Type != ncFloat || len(v.Dims) != 2 {
		return nil, errors.New("no float32 2-D variable ROSE")
	}
	shape := h.shape(v)
	ny, nx := shape[0], shape[1]
	if h.Dims[v.Dims[0]].Name != "ETOPO05_Y" || h.Dims[v.Dims[1]].Name != "ETOPO05_X" || ny != 2161 || nx != 4320 {
		return nil, fmt.Errorf("ROSE is %v over %s,%s; want [2161][4320] over ETOPO05_Y,ETOPO05_X", shape, h.Dims[v.Dims[0]].Name, h.Dims[v.Dims[1]].Name)
	}
	// The axes: Y from -90 by 1/12, X from 0 by 1/12.
	for _, ax := range []struct {
		name  string
		n     int
		first float64
	}{{"ETOPO05_Y", ny, -90}, {"ETOPO05_X", nx, 0}} {
		vals, err := readAxis(raw, h, ax.name, ax.n)
		if err != nil {
			return nil, err
		}
		for i, x := range vals {
			if want := ax.first + float64(i)/12; math.Abs(x-want) > 0.01 {
				return nil, fmt.Errorf("%s[%d] = %v, want %v", ax.name, i, x, want)
			}
		}
	}
	if v.Offset < 0 || v.Offset+int64(ny)*int64(nx)*4 > int64(len(raw)) {
		return nil, errors.New("ROSE data lie beyond the end of the file")
	}
	missing := math.NaN()
	if a, ok := v.attr("missing_value"); ok && len(a.Values) == 1 {
		missing = a.Values[0]
	}
	at := func(row, col int) int16 {
		col = ((col % nx) + nx) % nx
		f := float64(math.Float32frombits(binary.BigEndian.Uint32(raw[v.Offset+4*(int64(row)*int64(nx)+int64(col)):])))
		if math.IsNaN(f) || f == missing || math.Abs(f) > 12000 {
			return terrain.NoData
		}
		return int16(math.Round(f))
	}
	var out []terrain.Grid
	for _, r := range regions {
		r0, r1 := int(math.Round((r.south+90)*12)), int(math.Round((r.north+90)*12))
		c0, c1 := int(math.Round((r.west-lonShift)*12)), int(math.Round((r.east-lonShift)*12))
		g := terrain.Grid{Region: r.name, West: float64(c0)/12 + lonShift, South: float64(r0)/12 - 90, Step: 1.0 / 12, Rows: r1 - r0 + 1, Cols: c1 - c0 + 1}
		if r0 < 0 || r1 >= ny || g.Rows < 2 || g.Cols < 2 || g.Cols > nx {
			return nil, fmt.Errorf("region %s outside the grid", r.name)
		}
		g.Z = make([]int16, 0, g.Rows*g.Cols)
		for row := r1; row >= r0; row-- { // north first
			for col := c0; col <= c1; col++ {
				g.Z = append(g.Z, at(row, col))
			}
		}
		out = append(out, g)
	}
	return out, nil
}

func readAxis(raw []byte, h *ncHeader, name string, n int) ([]float64, error) {
	v, ok := h.variable(name)
	if !ok || len(v.Dims) != 1 || h.Dims[v.Dims[0]].Len != n {
		return nil, fmt.Errorf("no axis variable %s of length %d", name, n)
	}
	size := typeSize[v.Type]
	if v.Type == ncChar || v.Offset < 0 || v.Offset+int64(n*size) > int64(len(raw)) {
		return nil, fmt.Errorf("axis %s unreadable", name)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = number(v.Type, raw[v.Offset+int64(i*size):])
	}
	return out, nil
}
