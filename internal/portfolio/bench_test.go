//go:build unix

package portfolio

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

// benchRows is the number of rows one iteration of each sub-benchmark
// scores: the same points for the engine alone and for the pipeline.
const benchRows = 10000

// BenchmarkScoreReal measures `locrisk score`'s pipeline on the real data
// beside its baseline, the engine
// scoring one row at a time on one goroutine, in the same run. Every
// coordinate is covered (random points of the contiguous United States
// that the engine locates), the slowest case: a point outside coverage
// costs a lookup only. Each sub-benchmark reports rows/s; docs/performance.md
// (locrisk score) quotes a run.
//
//	go test -run '^$' -bench ScoreReal -benchtime 3x ./internal/portfolio
func BenchmarkScoreReal(b *testing.B) {
	eng, err := risk.Load(context.Background(), datatest.Real(b), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	pts := coveredPoints(b, eng, benchRows)
	var csv strings.Builder
	csv.WriteString("externalId,latitude,longitude\n")
	for i, p := range pts {
		fmt.Fprintf(&csv, "r%d,%.5f,%.5f\n", i+1, p[0], p[1])
	}
	file := csv.String()

	b.Run("engine-one-row", func(b *testing.B) {
		m := startMeter(b)
		rows := 0
		for b.Loop() {
			for _, p := range pts {
				if _, err := eng.Assess(context.Background(), p[0], p[1]); err != nil {
					b.Fatal(err)
				}
			}
			rows += len(pts)
		}
		m.report(b, rows)
	})
	for _, workers := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("score-csv-workers-%d", workers), func(b *testing.B) {
			m := startMeter(b)
			rows := 0
			for b.Loop() {
				input, err := Open(strings.NewReader(file))
				if err != nil {
					b.Fatal(err)
				}
				sum, err := input.Score(context.Background(), eng, io.Discard, Options{Workers: workers})
				if err != nil || sum.Scored != benchRows {
					b.Fatalf("summary %+v, %v", sum, err)
				}
				rows += sum.Rows
			}
			m.report(b, rows)
		})
	}
}

// coveredPoints draws n random points of the contiguous United States's
// bounding box that the engine covers, the same ones on every run.
func coveredPoints(tb testing.TB, eng *risk.Engine, n int) [][2]float64 {
	tb.Helper()
	r := rand.New(rand.NewPCG(15, 10000))
	pts := make([][2]float64, 0, n)
	for tries := 0; len(pts) < n; tries++ {
		if tries > 10*n {
			tb.Fatalf("only %d of %d points covered", len(pts), n)
		}
		lat, lon := 24.5+r.Float64()*(49.4-24.5), -124.8+r.Float64()*(124.8-66.9)
		if _, err := eng.Locate(lat, lon); err == nil {
			pts = append(pts, [2]float64{lat, lon})
		}
	}
	return pts
}

// meter measures a benchmark's wall time and the CPU time its process
// used. On a shared machine the wall-clock rate depends on what else runs;
// rows per CPU-second does much less, and times the cores it is the rate
// that many otherwise idle cores give.
type meter struct {
	wall time.Time
	cpu  time.Duration
}

func startMeter(tb testing.TB) meter {
	return meter{wall: time.Now(), cpu: processCPU(tb)}
}

// report adds rows/s (wall clock) and rows/cpu-s.
func (m meter) report(b *testing.B, rows int) {
	wall, cpu := time.Since(m.wall), processCPU(b)-m.cpu
	b.ReportMetric(float64(rows)/wall.Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(float64(rows)/cpu.Seconds(), "rows/cpu-s")
	}
}

// processCPU is the user and system CPU time of the process so far.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
