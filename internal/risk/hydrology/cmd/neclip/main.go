// Command neclip makes the data pack's Natural Earth river file from the
// published North American rivers (ne_10m_rivers_north_america, GeoJSON,
// optionally gzipped), reproducibly (the same input gives the same bytes):
//
//	neclip IN.geojson[.gz] OUT.geojson.gz
//
// It keeps the parts of every line that lie in the boxes the service
// covers, widened by a margin larger than the module's 25 km search (see
// boxes), splits MultiLineStrings into LineStrings, keeps the properties
// featurecla, scalerank, strokeweig and name, rounds positions to 5
// decimals (about 1 m), keeps the input's feature order and writes one
// feature per line, gzipped at level 9 with no name or time in the header.
// Every class is kept (rivers, lake centerlines, intermittent ones): the
// module chooses what it uses. Nothing depends on where the files lie.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// box is a longitude/latitude rectangle.
type box struct{ lonMin, lonMax, latMin, latMax float64 }

// boxes are the areas the service covers that the North American file
// reaches, each widened by about 0.4° (over 30 km): the conterminous
// states, Alaska (west of 129°W; the Aleutians west of 180° are not in the
// file) and Puerto Rico with the U.S. Virgin Islands.
var boxes = []box{
	{-125.2, -66.5, 24.1, 49.8},
	{-179.99, -129.0, 51.0, 71.8},
	{-67.7, -64.2, 17.5, 18.9},
}

func inside(lon, lat float64) bool {
	for _, b := range boxes {
		if lon >= b.lonMin && lon <= b.lonMax && lat >= b.latMin && lat <= b.latMax {
			return true
		}
	}
	return false
}

type feature struct {
	Properties map[string]any `json:"properties"`
	Geometry   *struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	} `json:"geometry"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: neclip IN.geojson[.gz] OUT.geojson.gz")
		os.Exit(2)
	}
	in, kept, err := run(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "neclip:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "neclip: %d features read, %d lines written\n", in, kept)
}

func run(inPath, outPath string) (int, int, error) {
	raw, err := os.ReadFile(inPath)
	if err != nil {
		return 0, 0, err
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return 0, 0, err
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return 0, 0, err
		}
	}
	var doc struct {
		Type     string    `json:"type"`
		Features []feature `json:"features"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, 0, err
	}
	if doc.Type != "FeatureCollection" {
		return 0, 0, errors.New("input is not a GeoJSON FeatureCollection")
	}
	var body bytes.Buffer
	kept := 0
	for i, f := range doc.Features {
		if f.Geometry == nil {
			continue
		}
		var lines [][][]float64
		switch f.Geometry.Type {
		case "LineString":
			var l [][]float64
			if err := json.Unmarshal(f.Geometry.Coordinates, &l); err != nil {
				return 0, 0, fmt.Errorf("feature %d: %v", i+1, err)
			}
			lines = [][][]float64{l}
		case "MultiLineString":
			if err := json.Unmarshal(f.Geometry.Coordinates, &lines); err != nil {
				return 0, 0, fmt.Errorf("feature %d: %v", i+1, err)
			}
		default:
			return 0, 0, fmt.Errorf("feature %d: geometry %s", i+1, f.Geometry.Type)
		}
		props, err := properties(f.Properties)
		if err != nil {
			return 0, 0, fmt.Errorf("feature %d: %v", i+1, err)
		}
		for _, l := range lines {
			for _, run := range clip(l) {
				if kept > 0 {
					body.WriteString(",\n")
				}
				body.WriteString(`{"type":"Feature","properties":`)
				body.Write(props)
				body.WriteString(`,"geometry":{"type":"LineString","coordinates":[`)
				for j, q := range run {
					if j > 0 {
						body.WriteByte(',')
					}
					fmt.Fprintf(&body, "[%s,%s]", coord(q[0]), coord(q[1]))
				}
				body.WriteString("]}}")
				kept++
			}
		}
	}
	out, err := os.Create(outPath)
	if err != nil {
		return 0, 0, err
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	w.WriteString("{\"type\":\"FeatureCollection\",\"features\":[\n")
	w.Write(body.Bytes())
	w.WriteString("\n]}\n")
	if err := w.Flush(); err != nil {
		out.Close()
		return 0, 0, err
	}
	if err := zw.Close(); err != nil {
		out.Close()
		return 0, 0, err
	}
	return len(doc.Features), kept, out.Close()
}

// properties writes the kept properties in a fixed order.
func properties(p map[string]any) ([]byte, error) {
	cla, ok := p["featurecla"].(string)
	if !ok {
		return nil, errors.New("no featurecla")
	}
	rank, ok := p["scalerank"].(float64)
	if !ok {
		return nil, errors.New("no scalerank")
	}
	var b bytes.Buffer
	enc := func(v any) {
		j, _ := json.Marshal(v)
		b.Write(j)
	}
	b.WriteString(`{"featurecla":`)
	enc(cla)
	b.WriteString(`,"scalerank":`)
	enc(rank)
	b.WriteString(`,"strokeweig":`)
	enc(p["strokeweig"])
	b.WriteString(`,"name":`)
	enc(p["name"])
	b.WriteByte('}')
	return b.Bytes(), nil
}

// clip returns the runs of the line that lie in the boxes, each with the
// first vertex outside on either side, so that a segment crossing a box
// edge is kept whole; runs of fewer than two positions are dropped.
func clip(l [][]float64) [][][]float64 {
	var out [][][]float64
	in := make([]bool, len(l))
	for i, q := range l {
		if len(q) < 2 {
			return nil
		}
		in[i] = inside(q[0], q[1])
	}
	for i := 0; i < len(l); {
		if !in[i] {
			i++
			continue
		}
		j := i
		for j < len(l) && in[j] {
			j++
		}
		from, to := max(i-1, 0), min(j+1, len(l))
		if to-from >= 2 {
			out = append(out, l[from:to])
		}
		i = j
	}
	return out
}

func coord(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e5)/1e5, 'f', -1, 64)
}
