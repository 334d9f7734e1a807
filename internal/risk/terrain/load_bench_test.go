package terrain

import (
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/geo"
)

func BenchmarkLoad(b *testing.B) {
	fsys := datatest.Real(b)
	for b.Loop() {
		if _, err := Load(fsys); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPoints: sites on both grids (the conterminous US and Alaska).
var benchPoints = []geo.Point{
	{Lat: 39.74, Lon: -104.99}, {Lat: 40.0, Lon: -105.3}, {Lat: 34.16, Lon: -118.05}, {Lat: 41.88, Lon: -87.63},
	{Lat: 36.14, Lon: -81.68}, {Lat: 47.6, Lon: -122.3}, {Lat: 61.2, Lon: -149.9}, {Lat: 64.84, Lon: -147.72},
}

func benchQuery(b *testing.B, q func(*Model, geo.Point) (Sample, bool)) {
	m := realModel(b)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, ok := q(m, benchPoints[i%len(benchPoints)]); !ok {
			b.Fatal("no answer")
		}
		i++
	}
}

func BenchmarkRelief5km(b *testing.B) {
	benchQuery(b, func(m *Model, p geo.Point) (Sample, bool) { return m.Relief(p, 5) })
}

func BenchmarkSlope5km(b *testing.B) {
	benchQuery(b, func(m *Model, p geo.Point) (Sample, bool) { return m.Slope(p, 5) })
}

func BenchmarkLowest5km(b *testing.B) {
	benchQuery(b, func(m *Model, p geo.Point) (Sample, bool) { return m.Lowest(p, 5) })
}

func BenchmarkElevation(b *testing.B) {
	benchQuery(b, func(m *Model, p geo.Point) (Sample, bool) { return m.Elevation(p) })
}
