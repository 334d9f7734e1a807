// Package portfolio scores a CSV file of coordinates with the engine
// directly, row by row, into the batch CSV's columns plus location and
// peril columns (docs/portfolio.md). It streams: rows are
// read, scored by a pool of workers and written in input order with a
// bounded number of rows in flight, so memory stays constant whatever the
// file's length. No database, quota or HTTP is involved.
package portfolio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/batchcsv"
	"github.com/locrisk/locrisk/internal/risk"
)

// Assessor is the engine as scoring needs it (risk.Engine satisfies it).
type Assessor interface {
	Assess(ctx context.Context, lat, lon float64) (*risk.Assessment, error)
}

// Options tune Score; the zero value is usable.
type Options struct {
	// Workers score rows side by side; 0 means one per CPU.
	Workers int
	// ChunkRows is how many rows a worker takes at a time; 0 means
	// defaultChunkRows. Rows in flight are at most about
	// ChunkRows × Workers × 4.
	ChunkRows int
	// Progress, when set, is called from Score's goroutine after each
	// chunk is written, with the rows written and the input bytes read so
	// far.
	Progress func(rows int, inputBytes int64)
}

// defaultChunkRows amortises the hand-offs between the reader, the
// workers and the writer over many rows while keeping a chunk small.
const defaultChunkRows = 128

// Summary counts what Score did.
type Summary struct {
	Rows     int            // data rows read (the header not counted)
	Scored   int            // rows with status completed
	Failed   int            // rows the engine failed on (status failed)
	Rejected map[string]int // rejected rows by error code
}

// chunk is a run of consecutive rows: read by the reader, scored and
// encoded by one worker, written by Score in order.
type chunk struct {
	rows  []row
	out   bytes.Buffer
	sum   Summary
	diff  DiffSummary   // Diff's counts
	read  int64         // input bytes read when the chunk was complete
	done  chan struct{} // closed by the worker
	werr  error         // an encoding error
	first int
}

// Input is a CSV file whose header has been read.
type Input struct {
	cr      *csv.Reader
	counted *countingReader
	l       *layout
}

// Open reads the header row of in. A file without a usable header is a
// *HeaderError; any other error is from reading.
func Open(in io.Reader) (*Input, error) {
	counted := &countingReader{r: in}
	cr := csv.NewReader(bufio.NewReaderSize(counted, 64<<10))
	cr.FieldsPerRecord = -1 // a short or long row is a bad row, not a bad file
	head, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, &HeaderError{"the file is empty: it needs a header row with externalId, latitude and longitude"}
	case err != nil:
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, &HeaderError{fmt.Sprintf("the header row is not valid CSV: %v", err)}
		}
		return nil, fmt.Errorf("reading the header: %w", err)
	}
	l, err := newLayout(head)
	if err != nil {
		return nil, err
	}
	return &Input{cr: cr, counted: counted, l: l}, nil
}

// Dropped are the input columns left out of the output because they are
// named like one of its own columns (a file scored before, scored again),
// so the output never has two columns of one name.
func (in *Input) Dropped() []string { return in.l.dropped }

// Score reads the data rows, scores each with eng and writes the output
// CSV to out (CRLF records, the batch CSV's cells), in input order. A bad
// row is reported in its output row. The error is from reading, writing or
// ctx, and the output so far is then incomplete.
func (in *Input) Score(ctx context.Context, eng Assessor, out io.Writer, opt Options) (Summary, error) {
	specs := risk.Registry()
	sum := Summary{Rejected: map[string]int{}}
	err := in.run(ctx, in.l.header, out, opt,
		func(ctx context.Context, c *chunk) { scoreChunk(ctx, eng, in.l, specs, c) },
		func(c *chunk) int { sum.add(c.sum); return sum.Rows })
	return sum, err
}

// add counts the rows of another run of rows in s.
func (s *Summary) add(o Summary) {
	s.Rows += o.Rows
	s.Scored += o.Scored
	s.Failed += o.Failed
	for k, v := range o.Rejected {
		s.Rejected[k] += v
	}
}

// run is the pipeline of Score and Diff: it writes header to out, reads
// the data rows in chunks, has a pool of workers process each chunk
// (encoding its output rows into c.out), and writes the chunks' output in
// input order, calling tally from its own goroutine for each chunk
// written, which returns the rows written so far for opt.Progress.
func (in *Input) run(ctx context.Context, header []string, out io.Writer, opt Options, process func(context.Context, *chunk), tally func(*chunk) int) error {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	size := opt.ChunkRows
	if size <= 0 {
		size = defaultChunkRows
	}
	cr, counted, l := in.cr, in.counted, in.l
	w := batchcsv.NewWriter(out)
	if err := w.Write(header); err != nil {
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	work := make(chan *chunk)
	order := make(chan *chunk, workers*4) // the bound on chunks in flight
	var readErr error                     // written by the reader before it closes order
	go func() {
		defer close(order)
		defer close(work)
		readErr = readChunks(ctx, cr, counted, l, size, work, order)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case c, ok := <-work:
					if !ok {
						return
					}
					process(ctx, c)
				case <-ctx.Done():
					// Not waiting for the reader: it may be blocked
					// reading a terminal or an idle pipe.
					return
				}
			}
		})
	}
	// On an early return the workers stop at the cancellation, within a
	// row each; the reader stops at its next row.
	defer func() { cancel(); wg.Wait() }()

	for {
		var c *chunk
		select {
		case c = <-order:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c == nil { // order closed: the reader is done
			break
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.werr != nil {
			return fmt.Errorf("encoding row %d: %w", c.first, c.werr)
		}
		if _, err := out.Write(c.out.Bytes()); err != nil {
			return fmt.Errorf("writing the output: %w", err)
		}
		rows := tally(c)
		if opt.Progress != nil {
			opt.Progress(rows, c.read)
		}
	}
	if readErr != nil {
		return readErr
	}
	return ctx.Err()
}

// readChunks reads the data rows into chunks and hands each to a worker
// (work) and, in order, to the writer (order).
func readChunks(ctx context.Context, cr *csv.Reader, counted *countingReader, l *layout, size int, work, order chan<- *chunk) error {
	number := 0
	var c *chunk
	send := func() bool {
		c.read = counted.n
		select {
		case order <- c:
		case <-ctx.Done():
			return false
		}
		select {
		case work <- c:
		case <-ctx.Done():
			return false
		}
		c = nil
		return true
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		number++
		if c == nil {
			c = &chunk{rows: make([]row, 0, size), done: make(chan struct{}), first: number}
		}
		var pe *csv.ParseError
		switch {
		case err == nil:
			c.rows = append(c.rows, l.parseRow(number, rec))
		case errors.As(err, &pe):
			c.rows = append(c.rows, l.badRecord(number, err))
		default:
			return fmt.Errorf("reading row %d: %w", number, err)
		}
		if len(c.rows) == size && !send() {
			return ctx.Err()
		}
	}
	if c != nil && !send() {
		return ctx.Err()
	}
	return nil
}

// scoreChunk scores and encodes every row of c and closes c.done.
func scoreChunk(ctx context.Context, eng Assessor, l *layout, specs []risk.ModuleSpec, c *chunk) {
	defer close(c.done)
	w := batchcsv.NewWriter(&c.out)
	rec := make([]string, 0, len(l.header))
	for i := range c.rows {
		r := &c.rows[i]
		var a *risk.Assessment
		if r.item.ErrorCode == nil {
			a = assess(ctx, eng, r)
		}
		c.sum.Rows++
		switch r.item.Status {
		case locrisk.StatusCompleted:
			c.sum.Scored++
		case locrisk.StatusFailed:
			c.sum.Failed++
		default:
			if c.sum.Rejected == nil {
				c.sum.Rejected = map[string]int{}
			}
			c.sum.Rejected[*r.item.ErrorCode]++
		}
		rec = record(rec[:0], r, a, specs)
		if err := w.Write(rec); err != nil {
			c.werr = err
			return
		}
	}
	w.Flush()
	c.werr = w.Error()
}

// assess scores one row, filling its item; a panic in the engine fails
// the row rather than the run, as it fails a job rather than the server.
func assess(ctx context.Context, eng Assessor, r *row) (a *risk.Assessment) {
	defer func() {
		if p := recover(); p != nil {
			a = nil
			r.fail(fmt.Sprintf("report generation failed with an internal error: %v", p))
		}
	}()
	a, err := eng.Assess(ctx, r.lat, r.lon)
	switch {
	case err == nil && a != nil:
		r.fill(a)
		return a
	case errors.Is(err, risk.ErrUnsupportedLocation):
		r.reject(CodeUnsupported, fmt.Sprintf("the coordinate %v, %v is outside the supported United States coverage", r.lat, r.lon))
	case err == nil:
		r.fail("report generation failed: the engine returned no assessment")
	default:
		r.fail(fmt.Sprintf("report generation failed: %v", err))
	}
	return nil
}

// countingReader counts the bytes read through it, for progress. It is
// read by the reader goroutine only; each chunk carries a copy.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
