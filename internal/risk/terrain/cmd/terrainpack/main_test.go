package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// ncFile writes a small netCDF classic file: dimensions, one float
// attribute on each variable, 1-D axes and a 2-D float variable.
func ncFile(dims []ncDim, vars []struct {
	name string
	dims []int
	data []float32
}) []byte {
	var h bytes.Buffer
	u32 := func(v uint32) { binary.Write(&h, binary.BigEndian, v) }
	name := func(s string) {
		u32(uint32(len(s)))
		h.WriteString(s)
		for h.Len()%4 != 0 {
			h.WriteByte(0)
		}
	}
	h.WriteString("CDF\x01")
	u32(0)
	u32(tagDimension)
	u32(uint32(len(dims)))
	for _, d := range dims {
		name(d.Name)
		u32(uint32(d.Len))
	}
	u32(0) // no global attributes
	u32(0)
	u32(tagVariable)
	u32(uint32(len(vars)))
	var offsets []int
	for _, v := range vars {
		name(v.name)
		u32(uint32(len(v.dims)))
		for _, d := range v.dims {
			u32(uint32(d))
		}
		u32(tagAttribute)
		u32(1)
		name("missing_value")
		u32(ncFloat)
		u32(1)
		u32(math.Float32bits(-99999))
		u32(ncFloat)
		u32(uint32(4 * len(v.data)))
		offsets = append(offsets, h.Len())
		u32(0) // begin, patched below
	}
	b := h.Bytes()
	for i, v := range vars {
		binary.BigEndian.PutUint32(b[offsets[i]:], uint32(len(b)))
		for _, f := range v.data {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	return b
}

func TestNetCDFHeader(t *testing.T) {
	b := ncFile([]ncDim{{"y", 2}, {"x", 3}}, []struct {
		name string
		dims []int
		data []float32
	}{{"x", []int{1}, []float32{0, 1, 2}}, {"z", []int{0, 1}, []float32{1, 2, 3, 4, 5, 6}}})
	h, err := parseNetCDFHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := h.variable("z")
	if !ok || v.Type != ncFloat || len(h.shape(v)) != 2 || h.shape(v)[0] != 2 || h.shape(v)[1] != 3 {
		t.Fatalf("z: %+v", v)
	}
	if a, ok := v.attr("missing_value"); !ok || a.Values[0] != -99999 {
		t.Errorf("missing_value %+v", a)
	}
	if got := number(ncFloat, b[v.Offset+4*5:]); got != 6 {
		t.Errorf("z[1][2] = %v", got)
	}
	for n := range b[:int(h.Vars[0].Offset)] { // the header ends where the first data begin
		if _, err := parseNetCDFHeader(b[:n]); err == nil {
			t.Fatalf("a header cut at byte %d parsed", n)
		}
	}
	// The wrong layout is refused by clip.
	if _, err := clip(b, regions); err == nil {
		t.Error("clip accepted a file without ROSE")
	}
}

// TestClipReproducesPack: clipping the public mirror's ETOPO5 gives the
// pack's file byte for byte. Skipped without the mirror beside the
// repository.
func TestClipReproducesPack(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "..")
	in := filepath.Join(root, "..", "shared", "data", "terrain", "etopo5_ngdc_1993_ferret.cdf.gz")
	if _, err := os.Stat(in); err != nil {
		t.Skipf("need the public data mirror beside the repository (../shared/data): %v", err)
	}
	out := filepath.Join(t.TempDir(), "clip.grd.gz")
	if err := clipETOPO5(in, out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, err := os.ReadFile(filepath.Join(root, "datapack", "terrain", "noaa_etopo5_1993_us_clip.grd.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the clip (%d bytes) differs from the pack's file (%d bytes)", len(got), len(want))
	}
}

func FuzzNetCDFHeader(f *testing.F) {
	f.Add(ncFile([]ncDim{{"y", 2}, {"x", 3}}, []struct {
		name string
		dims []int
		data []float32
	}{{"z", []int{0, 1}, []float32{1, 2, 3, 4, 5, 6}}}))
	f.Add([]byte("CDF\x02\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseNetCDFHeader(b)
		if err != nil {
			return
		}
		for i := range h.Vars {
			h.shape(&h.Vars[i])
		}
		clip(b, regions)
	})
}

// TestZipReproducesPack: zipping the public mirror's tiles gives the pack's
// zip byte for byte. Skipped without the mirror beside the repository.
func TestZipReproducesPack(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "..")
	dir := filepath.Join(root, "..", "shared", "data", "terrain", "srtm30plus_z6")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("need the public data mirror beside the repository (../shared/data): %v", err)
	}
	out := filepath.Join(t.TempDir(), "tiles.zip")
	if err := zipTiles(dir, out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, err := os.ReadFile(filepath.Join(root, "datapack", "terrain", "srtm30plus_v9_z6_tiles.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the zip (%d bytes) differs from the pack's file (%d bytes)", len(got), len(want))
	}
}
