package terrain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Grid is one regular latitude-longitude block of elevations: the unit of
// the clipped ETOPO5 file. Values are whole metres at the grid points
// (cell centres); row 0 is the northernmost.
type Grid struct {
	Region     string  // a name for the block, e.g. "conus"
	West       float64 // longitude of column 0, degrees east (a block may run past 180)
	South      float64 // latitude of the last (southernmost) row, degrees north
	Step       float64 // spacing of rows and columns, degrees
	Rows, Cols int
	Z          []int16 // Rows*Cols, row-major, north row first; NoData where unknown
}

// NoData marks an unknown value in a Grid and in the grid file.
const NoData = math.MinInt16

// The grid file (ETOPO5 clip in the data pack, before gzip) is a sequence
// of blocks, each an ESRI ASCII grid preceded by a line naming the block:
//
//	region conus
//	ncols 727
//	nrows 331
//	xllcenter -126
//	yllcenter 23
//	cellsize 0.08333333333333333
//	nodata_value -32768
//	<nrows lines of ncols integers, metres, north row first>
//
// Lines starting with # are comments. xllcenter/yllcenter are the centre
// of the south-west cell; a block crossing the antimeridian has xllcenter
// below 180 and runs east past it (Alaska's Aleutians).

// WriteGrids writes blocks in the grid file format.
func WriteGrids(w io.Writer, comment string, grids []Grid) error {
	bw := bufio.NewWriter(w)
	for _, line := range strings.Split(strings.TrimSpace(comment), "\n") {
		if line != "" {
			fmt.Fprintf(bw, "# %s\n", line)
		}
	}
	for _, g := range grids {
		if len(g.Z) != g.Rows*g.Cols || g.Rows < 2 || g.Cols < 2 {
			return fmt.Errorf("grid %s: %d values for %dx%d", g.Region, len(g.Z), g.Rows, g.Cols)
		}
		fmt.Fprintf(bw, "region %s\nncols %d\nnrows %d\nxllcenter %s\nyllcenter %s\ncellsize %s\nnodata_value %d\n",
			g.Region, g.Cols, g.Rows, ftoa(g.West), ftoa(g.South), ftoa(g.Step), NoData)
		var buf []byte
		for r := 0; r < g.Rows; r++ {
			buf = buf[:0]
			for c := 0; c < g.Cols; c++ {
				if c > 0 {
					buf = append(buf, ' ')
				}
				buf = strconv.AppendInt(buf, int64(g.Z[r*g.Cols+c]), 10)
			}
			buf = append(buf, '\n')
			bw.Write(buf)
		}
	}
	return bw.Flush()
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// maxGridCells bounds one block (a whole-world 1/12 degree grid is 9.3 M).
const maxGridCells = 10_000_000

// ParseGrids reads the grid file format (WriteGrids).
func ParseGrids(b []byte) ([]Grid, error) {
	var grids []Grid
	line := 0
	rest := b
	next := func() (string, bool) {
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '\n')
			var l []byte
			if i < 0 {
				l, rest = rest, nil
			} else {
				l, rest = rest[:i], rest[i+1:]
			}
			line++
			s := strings.TrimSpace(string(l))
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			return s, true
		}
		return "", false
	}
	for {
		s, ok := next()
		if !ok {
			break
		}
		name, found := strings.CutPrefix(s, "region ")
		if !found || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("line %d: want \"region NAME\", got %.40q", line, s)
		}
		g := Grid{Region: strings.TrimSpace(name)}
		hdr := map[string]float64{}
		for _, key := range []string{"ncols", "nrows", "xllcenter", "yllcenter", "cellsize", "nodata_value"} {
			s, ok := next()
			k, v, _ := strings.Cut(s, " ")
			if !ok || !strings.EqualFold(k, key) {
				return nil, fmt.Errorf("line %d: region %s: want %s", line, g.Region, key)
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("line %d: region %s: bad %s %q", line, g.Region, key, v)
			}
			hdr[key] = f
		}
		g.Cols, g.Rows = int(hdr["ncols"]), int(hdr["nrows"])
		g.West, g.South, g.Step = hdr["xllcenter"], hdr["yllcenter"], hdr["cellsize"]
		if float64(g.Cols) != hdr["ncols"] || float64(g.Rows) != hdr["nrows"] || g.Cols < 2 || g.Rows < 2 ||
			g.Cols > maxGridCells || g.Rows > maxGridCells || g.Cols*g.Rows > maxGridCells {
			return nil, fmt.Errorf("region %s: bad size %vx%v", g.Region, hdr["nrows"], hdr["ncols"])
		}
		if !(g.Step > 0 && g.Step <= 1) || g.South < -90 || g.South+g.Step*float64(g.Rows-1) > 90+1e-9 || g.West < -360 || g.West > 360 {
			return nil, fmt.Errorf("region %s: extent out of range", g.Region)
		}
		nodata := hdr["nodata_value"]
		g.Z = make([]int16, 0, g.Rows*g.Cols)
		for r := 0; r < g.Rows; r++ {
			s, ok := next()
			if !ok {
				return nil, fmt.Errorf("region %s: %d of %d rows", g.Region, r, g.Rows)
			}
			n := 0
			for f := range strings.FieldsSeq(s) {
				v, err := strconv.ParseInt(f, 10, 32)
				if err != nil {
					return nil, fmt.Errorf("line %d: region %s: %q is not an integer", line, g.Region, f)
				}
				switch {
				case float64(v) == nodata:
					v = NoData
				case v <= math.MinInt16 || v > math.MaxInt16:
					return nil, fmt.Errorf("line %d: region %s: %d m out of range", line, g.Region, v)
				}
				n++
				if n > g.Cols {
					break
				}
				g.Z = append(g.Z, int16(v))
			}
			if n != g.Cols {
				return nil, fmt.Errorf("line %d: region %s: %d values, want %d", line, g.Region, n, g.Cols)
			}
		}
		grids = append(grids, g)
	}
	if len(grids) == 0 {
		return nil, errors.New("no region in the grid file")
	}
	return grids, nil
}
