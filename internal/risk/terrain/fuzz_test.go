package terrain

import (
	"archive/zip"
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func FuzzParseGrids(f *testing.F) {
	var b bytes.Buffer
	g := planeGrid(1, 0.5)
	if err := WriteGrids(&b, "fuzz seed", []Grid{g}); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte("region x\nncols 2\nnrows 2\nxllcenter 0\nyllcenter 0\ncellsize 0.5\nnodata_value -32768\n1 2\n3 -32768\n"))
	f.Add([]byte("region x\nncols 2\nnrows 1e9\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		grids, err := ParseGrids(b)
		if err != nil {
			return
		}
		for _, g := range grids {
			if len(g.Z) != g.Rows*g.Cols || g.Rows < 2 || g.Cols < 2 {
				t.Fatalf("grid %s: %d values for %dx%d", g.Region, len(g.Z), g.Rows, g.Cols)
			}
		}
		// What parses writes back and parses the same.
		var out bytes.Buffer
		if err := WriteGrids(&out, "", grids); err != nil {
			t.Fatal(err)
		}
		again, err := ParseGrids(out.Bytes())
		if err != nil || len(again) != len(grids) {
			t.Fatalf("round trip: %v", err)
		}
		m := gridModel(grids...)
		for _, gr := range grids {
			m.Relief(geoPoint(gr.South, gr.West), 10)
			m.Slope(geoPoint(gr.South, gr.West), 10)
		}
	})
}

func TestGridRoundTrip(t *testing.T) {
	g := planeGrid(2, 1)
	g.Z[5] = NoData
	var b bytes.Buffer
	if err := WriteGrids(&b, "a\nb", []Grid{g, g}); err != nil {
		t.Fatal(err)
	}
	got, err := ParseGrids(b.Bytes())
	if err != nil || len(got) != 2 {
		t.Fatalf("ParseGrids: %v, %d grids", err, len(got))
	}
	if got[1].West != g.West || got[1].South != g.South || got[1].Step != g.Step || !bytes.Equal(int16Bytes(got[1].Z), int16Bytes(g.Z)) {
		t.Errorf("round trip changed the grid")
	}
	for _, bad := range []string{"", "ncols 2\n", "region a\nncols 2\nnrows 2\nxllcenter 0\nyllcenter 0\ncellsize 1\nnodata_value -9999\n1 2\n", "region a\nncols 2\nnrows 2\nxllcenter 0\nyllcenter 0\ncellsize 1\nnodata_value -9999\n1 2\n3 40000\n"} {
		if _, err := ParseGrids([]byte(bad)); err == nil {
			t.Errorf("ParseGrids(%q) accepted", bad)
		}
	}
}

func int16Bytes(z []int16) []byte {
	b := make([]byte, 0, 2*len(z))
	for _, v := range z {
		b = append(b, byte(v), byte(v>>8))
	}
	return b
}

// tileZip makes a zip holding the named PNG tiles, each filled with one
// elevation.
func tileZip(t testing.TB, tiles map[string]int) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, v := range tiles {
		img := image.NewNRGBA(image.Rect(0, 0, tileSize, tileSize))
		u := uint32(v) & 0xffffff
		for i := 0; i < tileSize*tileSize; i++ {
			img.Set(i%tileSize, i/tileSize, color.NRGBA{uint8(u), uint8(u >> 8), uint8(u >> 16), 255})
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(w, img); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadTiles(t *testing.T) {
	raw, have, err := readTiles(tileZip(t, map[string]int{"6/13/24.png": 1603, "6/9/21.png": -80}))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ok := range have {
		if ok {
			n++
		}
	}
	if n != 2 || !have[(24-tileY0)*tilesX+13-tileX0] {
		t.Errorf("tiles held: %v", have)
	}
	if v := raw[(3*tileSize+10)*mosaicW+4*tileSize+10]; v != 1603 {
		t.Errorf("pixel of 6/13/24 = %d", v)
	}
	if v := raw[0]; v != -80 {
		t.Errorf("pixel of 6/9/21 = %d", v)
	}
	if v := raw[mosaicW*mosaicH-1]; v != rawMissing {
		t.Errorf("pixel of a missing tile = %d", v)
	}
	for _, bad := range []map[string]int{{"6/8/21.png": 1}, {"5/9/21.png": 1}, {"6/9/21.jpg": 1}, {"6/x/21.png": 1}} {
		if _, _, err := readTiles(tileZip(t, bad)); err == nil {
			t.Errorf("readTiles accepted %v", bad)
		}
	}
	if _, _, err := readTiles([]byte("not a zip")); err == nil {
		t.Error("readTiles accepted garbage")
	}
}

// FuzzTile: a tile's PNG and its entry name, the two things readTiles
// takes from the zip.
func FuzzTile(f *testing.F) {
	var b bytes.Buffer
	img := image.NewNRGBA(image.Rect(0, 0, tileSize, tileSize))
	img.Set(3, 4, color.NRGBA{67, 6, 0, 255})
	if err := png.Encode(&b, img); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes(), "6/13/24.png")
	f.Add([]byte("\x89PNG\r\n\x1a\n"), "6/9/21.png")
	out := make([]int32, mosaicW*mosaicH) // one per worker, reused
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		if x, y, err := tileName(name); err == nil && (x < tileX0 || x >= tileX0+tilesX || y < tileY0 || y >= tileY0+tilesY) {
			t.Fatalf("tileName(%q) = %d, %d", name, x, y)
		}
		_ = decodeTile(b, out, 0, 0)
	})
}
