package terrain

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/locrisk/locrisk/internal/risk/geo"
)

// The SRTM30_PLUS tiles: zoom 6 web-map tiles (XYZ numbering, y = 0 at the
// north), 256 x 256 pixels each, x = tileX0..tileX0+tilesX-1 and
// y = tileY0..tileY0+tilesY-1, mosaicked into one grid: tile bounds in web
// Mercator, rows within a tile even in latitude (see mosaicLat).
const (
	tileZoom   = 6
	tileSize   = 256
	tileX0     = 9
	tileY0     = 21
	tilesX     = 12
	tilesY     = 7
	mosaicW    = tilesX * tileSize // 3072
	mosaicH    = tilesY * tileSize // 1792
	worldPx    = tileSize << tileZoom
	maxPNGSide = 4096
)

// raw pixel classes of the tiles' RGB encoding.
const (
	// rawMixed marks a pixel whose B byte is neither 0 nor 255: the
	// averaging mixed land (B = 0) and sea (B = 255) cells, so its R and G
	// bytes are meaningless.
	rawMixed = math.MinInt32
)

// decodeRGB is the tiles' encoding: elevation = R + 256 G, B = 255 marking
// a negative value (value - 65536); rawMixed when B is anything else.
func decodeRGB(r, g, b uint8) int32 {
	v := int32(r) + 256*int32(g)
	switch b {
	case 0:
		return v
	case 255:
		return v - 65536
	}
	return rawMixed
}

// rawMissing marks a pixel of a tile the zip does not hold.
const rawMissing = math.MinInt32 + 1

// readTiles reads the zip of tiles into the raw mosaic (decodeRGB values,
// north row first) and says which tiles it held (index (y-tileY0)*tilesX +
// x-tileX0); a tile it lacks reads rawMissing, and no tile may come twice.
func readTiles(zb []byte) ([]int32, [tilesX * tilesY]bool, error) {
	var seen [tilesX * tilesY]bool
	out, err := readTilesInto(zb, &seen)
	return out, seen, err
}

func readTilesInto(zb []byte, seen *[tilesX * tilesY]bool) ([]int32, error) {
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		return nil, fmt.Errorf("tiles: %w", err)
	}
	type job struct {
		f      *zip.File
		tx, ty int
	}
	var jobs []job
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		tx, ty, err := tileName(f.Name)
		if err != nil {
			return nil, err
		}
		i := (ty-tileY0)*tilesX + (tx - tileX0)
		if seen[i] {
			return nil, fmt.Errorf("tiles: %s twice", f.Name)
		}
		seen[i] = true
		if f.UncompressedSize64 > 16<<20 {
			return nil, fmt.Errorf("tiles: %s too large", f.Name)
		}
		jobs = append(jobs, job{f, tx, ty})
	}
	out := make([]int32, mosaicW*mosaicH)
	for i := range out {
		out[i] = rawMissing
	}
	// Tiles decode in parallel, each into its own part of the mosaic.
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	workers := min(max(runtime.GOMAXPROCS(0), 1), 8)
	for k := 0; k < workers; k++ {
		wg.Go(func() {
			for j := k; j < len(jobs); j += workers {
				errs[j] = readTile(jobs[j].f, out, (jobs[j].tx-tileX0)*tileSize, (jobs[j].ty-tileY0)*tileSize)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func readTile(f *zip.File, out []int32, ox, oy int) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("tiles: %s: %w", f.Name, err)
	}
	b, err := io.ReadAll(io.LimitReader(rc, 16<<20))
	rc.Close()
	if err != nil {
		return fmt.Errorf("tiles: %s: %w", f.Name, err)
	}
	if err := decodeTile(b, out, ox, oy); err != nil {
		return fmt.Errorf("tiles: %s: %w", f.Name, err)
	}
	return nil
}

// tileName parses "6/x/y.png" for a tile of the mosaic.
func tileName(name string) (x, y int, err error) {
	parts := strings.Split(strings.TrimSuffix(name, ".png"), "/")
	if len(parts) != 3 || !strings.HasSuffix(name, ".png") || parts[0] != strconv.Itoa(tileZoom) {
		return 0, 0, fmt.Errorf("tiles: unexpected entry %q (want %d/x/y.png)", name, tileZoom)
	}
	x, err1 := strconv.Atoi(parts[1])
	y, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || x < tileX0 || x >= tileX0+tilesX || y < tileY0 || y >= tileY0+tilesY {
		return 0, 0, fmt.Errorf("tiles: entry %q is not a tile of the mosaic (x %d-%d, y %d-%d)", name, tileX0, tileX0+tilesX-1, tileY0, tileY0+tilesY-1)
	}
	return x, y, nil
}

// decodeTile decodes one PNG tile into the mosaic at (ox, oy).
func decodeTile(b []byte, out []int32, ox, oy int) error {
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if cfg.Width != tileSize || cfg.Height != tileSize {
		return fmt.Errorf("%dx%d pixels, want %d", cfg.Width, cfg.Height, tileSize)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	put := func(x, y int, r, g, b uint8) { out[(oy+y)*mosaicW+ox+x] = decodeRGB(r, g, b) }
	switch im := img.(type) {
	case *image.NRGBA:
		for y := 0; y < tileSize; y++ {
			row := im.Pix[y*im.Stride:]
			for x := 0; x < tileSize; x++ {
				put(x, y, row[4*x], row[4*x+1], row[4*x+2])
			}
		}
	case *image.RGBA:
		for y := 0; y < tileSize; y++ {
			row := im.Pix[y*im.Stride:]
			for x := 0; x < tileSize; x++ {
				put(x, y, row[4*x], row[4*x+1], row[4*x+2])
			}
		}
	default:
		bnd := img.Bounds()
		for y := 0; y < tileSize; y++ {
			for x := 0; x < tileSize; x++ {
				c := image.NewNRGBA(image.Rect(0, 0, 1, 1)).ColorModel().Convert(img.At(bnd.Min.X+x, bnd.Min.Y+y))
				r, g, bb, _ := c.RGBA()
				put(x, y, uint8(r>>8), uint8(g>>8), uint8(bb>>8))
			}
		}
	}
	return nil
}

// mosaicLon and mosaicLat are the longitude and latitude of the centre of
// mosaic column x and row y.
//
// The tiles' own bounds are web Mercator (tile row t spans the latitudes of
// Mercator rows 256t to 256t+256 of the world), but inside a tile the
// pixel rows are spaced evenly in latitude, not in Mercator y: read as
// Mercator rows, every feature stands north of where it belongs by up to
// 2.3 rows (about 4 km) in the middle of a tile and by nothing at its
// edges. Isolated summits show it (TestPeakRegistrationReal): as Mercator
// rows 38 volcanoes and summits stood a median 2.1 km north of their true
// places, Mt. Rainier 3.7 km, Mt. Baker (near a tile edge) 0.1 km; with
// rows even in latitude the median is 0.6 km. Columns are even in
// longitude either way, and no east-west shift shows (median 0.0 km).
func mosaicLon(x float64) float64 {
	return (float64(tileX0*tileSize)+x+0.5)/worldPx*360 - 180
}

func mosaicLat(y float64) float64 {
	u := float64(tileY0*tileSize) + y + 0.5 // world pixel row, edges whole
	t := math.Floor(u / tileSize)
	north, south := mercatorLat(t*tileSize), mercatorLat((t+1)*tileSize)
	return north - (u/tileSize-t)*(north-south)
}

// mosaicXY is the fractional column and row of a point (inverse of
// mosaicLon, mosaicLat).
func mosaicXY(lat, lon float64) (x, y float64) {
	x = (lon+180)/360*worldPx - float64(tileX0*tileSize) - 0.5
	phi := lat * math.Pi / 180
	t := math.Floor((1 - math.Log(math.Tan(math.Pi/4+phi/2))/math.Pi) / 2 * worldPx / tileSize) // the tile row
	north, south := mercatorLat(t*tileSize), mercatorLat((t+1)*tileSize)
	y = (t+(north-lat)/(north-south))*tileSize - float64(tileY0*tileSize) - 0.5
	return x, y
}

// mercatorLat is the latitude of the top edge of world pixel row u in web
// Mercator (whole tile rows: u a multiple of tileSize).
func mercatorLat(u float64) float64 {
	return math.Atan(math.Sinh(math.Pi*(1-2*u/worldPx))) * 180 / math.Pi
}

// mosaicCellKm is the east-west side of a mosaic pixel in km at latitude
// lat; north-south a pixel is within about 3% of it (mosaicRowKm).
func mosaicCellKm(lat float64) float64 {
	return earthCircumferenceKm / worldPx * math.Cos(lat*math.Pi/180)
}

// mosaicRowKm is the north-south side in km of the pixels of the tile row
// holding latitude lat.
func mosaicRowKm(lat float64) float64 {
	_, y := mosaicXY(lat, 0)
	return (mosaicLat(y-0.5) - mosaicLat(y+0.5)) * geo.KmPerDegLat
}

const earthCircumferenceKm = 2 * math.Pi * geo.EarthRadiusKm
