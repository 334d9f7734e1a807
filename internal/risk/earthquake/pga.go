package earthquake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// The NSHM 2018 CONUS grid: 0.05-degree nodes from lon -125 to -65 and lat
// 24.4 to 50. Coordinates are handled in hundredths of a degree so that node
// lookup is exact integer arithmetic rather than float rounding.
const (
	gridLon0   = -12500 // hundredths of a degree
	gridLat0   = 2440
	gridStep   = 5 // hundredths of a degree
	gridCols   = 1201
	gridRows   = 513
	gridNoData = math.MaxUint16
)

// pgaGrid holds PGA in milli-g, one uint16 per node (1.2 MB), row-major from
// the southern row up. Nodes missing from the file hold gridNoData.
type pgaGrid struct {
	milliG []uint16
	nodes  int // nodes read from the file
}

// loadPGA reads the long table lon,lat,pga_g. The file has 616k lines, so it
// is parsed by hand from the raw bytes: encoding/csv and strconv.ParseFloat
// would take several times longer than the decompression itself.
func loadPGA(fsys fs.FS, rel string) (*pgaGrid, error) {
	rc, err := data.Open(fsys, rel)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return parsePGA(rel, rc)
}

func parsePGA(name string, r io.Reader) (*pgaGrid, error) {
	g := &pgaGrid{milliG: make([]uint16, gridCols*gridRows)}
	for i := range g.milliG {
		g.milliG[i] = gridNoData
	}
	br := bufio.NewReaderSize(r, 1<<16)
	line := 0
	iLon, iLat, iPGA, nCols := -1, -1, -1, 0
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%s line %d: line too long", name, line+1)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s line %d: %w", name, line+1, err)
		}
		if len(b) == 0 && err != nil {
			break
		}
		line++
		b = bytes.TrimRight(b, "\r\n")
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
			for i, f := range bytes.Split(b, []byte(",")) {
				switch string(bytes.TrimSpace(f)) {
				case "lon":
					iLon = i
				case "lat":
					iLat = i
				case "pga_g":
					iPGA = i
				}
				nCols = i + 1
			}
			if iLon < 0 || iLat < 0 || iPGA < 0 {
				return nil, fmt.Errorf("%s line 1: header lacks column(s) lon, lat, pga_g", name)
			}
		} else if len(bytes.TrimSpace(b)) > 0 {
			if perr := g.addLine(b, iLon, iLat, iPGA, nCols); perr != nil {
				return nil, fmt.Errorf("%s line %d: %w", name, line, perr)
			}
		}
		if err != nil {
			break
		}
	}
	if line == 0 {
		return nil, fmt.Errorf("%s line 1: reading header: empty file", name)
	}
	if g.nodes == 0 {
		return nil, fmt.Errorf("%s: no grid nodes", name)
	}
	return g, nil
}

func (g *pgaGrid) addLine(b []byte, iLon, iLat, iPGA, nCols int) error {
	var fields [8][]byte
	n := 0
	for n < len(fields) {
		j := bytes.IndexByte(b, ',')
		if j < 0 {
			fields[n] = b
			n++
			break
		}
		fields[n] = b[:j]
		b = b[j+1:]
		n++
	}
	if n < nCols {
		return fmt.Errorf("%d fields, want %d", n, nCols)
	}
	lon, ok := parseFixed(fields[iLon], 2)
	if !ok {
		return fmt.Errorf("column \"lon\": %q is not a coordinate in hundredths of a degree", fields[iLon])
	}
	lat, ok := parseFixed(fields[iLat], 2)
	if !ok {
		return fmt.Errorf("column \"lat\": %q is not a coordinate in hundredths of a degree", fields[iLat])
	}
	col, okc := gridIndex(lon, gridLon0, gridCols)
	row, okr := gridIndex(lat, gridLat0, gridRows)
	if !okc || !okr {
		return fmt.Errorf("(%s, %s) is not a node of the 0.05-degree grid lon -125..-65, lat 24.4..50", fields[iLon], fields[iLat])
	}
	mg, ok := parseFixed(fields[iPGA], 3)
	if !ok {
		// More than three decimals: accept any number, rounded to milli-g.
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(fields[iPGA])), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("column \"pga_g\": %q is not a number", fields[iPGA])
		}
		mg = int64(math.Round(v * 1000))
	}
	if mg < 0 || mg >= gridNoData {
		return fmt.Errorf("column \"pga_g\": %q is out of range", fields[iPGA])
	}
	k := row*gridCols + col
	if g.milliG[k] != gridNoData {
		return fmt.Errorf("duplicate grid node (%s, %s)", fields[iLon], fields[iLat])
	}
	g.milliG[k] = uint16(mg)
	g.nodes++
	return nil
}

// gridIndex maps a coordinate in hundredths of a degree to its node number.
func gridIndex(v, origin int64, n int) (int, bool) {
	d := v - origin
	if d < 0 || d%gridStep != 0 || d/gridStep >= int64(n) {
		return 0, false
	}
	return int(d / gridStep), true
}

// parseFixed parses a decimal number such as "-124.95" as an integer count
// of 10^-scale units. ok is false for anything else, including more than
// scale significant decimals (trailing zeros are fine).
func parseFixed(b []byte, scale int) (int64, bool) {
	b = bytes.TrimSpace(b)
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	var v int64
	digits, decimals := 0, -1
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if decimals >= 0 {
				if decimals == scale {
					if c != '0' {
						return 0, false
					}
					continue
				}
				decimals++
			}
			v = v*10 + int64(c-'0')
			digits++
			if digits > 15 {
				return 0, false
			}
		case c == '.' && decimals < 0:
			decimals = 0
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	if decimals < 0 {
		decimals = 0
	}
	for ; decimals < scale; decimals++ {
		v *= 10
	}
	if neg {
		v = -v
	}
	return v, true
}

// at returns the bilinearly interpolated PGA in g at lat, lon. Nodes missing
// from the file are left out and the weights of the others renormalised; ok
// is false outside the grid or when no surrounding node has a value.
func (g *pgaGrid) at(lat, lon float64) (float64, bool) {
	x := (lon*100 - gridLon0) / gridStep
	y := (lat*100 - gridLat0) / gridStep
	// Snap coordinates within float noise of a node onto it, so a site on a
	// node returns exactly that node's value.
	if r := math.Round(x); math.Abs(x-r) < 1e-7 {
		x = r
	}
	if r := math.Round(y); math.Abs(y-r) < 1e-7 {
		y = r
	}
	if !(x >= 0 && y >= 0 && x <= gridCols-1 && y <= gridRows-1) {
		return 0, false
	}
	i, j := int(x), int(y)
	if i == gridCols-1 {
		i--
	}
	if j == gridRows-1 {
		j--
	}
	tx, ty := x-float64(i), y-float64(j)
	k := j*gridCols + i
	corners := [4]struct {
		k int
		w float64
	}{
		{k, (1 - tx) * (1 - ty)},
		{k + 1, tx * (1 - ty)},
		{k + gridCols, (1 - tx) * ty},
		{k + gridCols + 1, tx * ty},
	}
	var sum, wsum float64
	for _, c := range corners {
		if c.w == 0 {
			continue
		}
		v := g.milliG[c.k]
		if v == gridNoData {
			continue
		}
		sum += c.w * float64(v)
		wsum += c.w
	}
	if wsum < 1e-9 {
		return 0, false
	}
	return sum / wsum / 1000, true
}
