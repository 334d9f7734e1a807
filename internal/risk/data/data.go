// Package data names and opens the public hazard data the risk engine reads
// at start-up: the catalog of sources, the data pack that carries their
// files with a manifest of provenance and checksums, and CSV tables read
// with errors that name the file and the line.
//
// Files are addressed by their path inside a data pack: the pack embedded in
// the binary, or a folder named by --data-dir / LOCRISK_DATA_DIR, both read
// through io/fs (docs/data.md). Gzip files are decompressed on the fly;
// nothing is unpacked to disk.
package data

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// ErrMissing reports a data file that is not in the data pack.
var ErrMissing = errors.New("data file missing")

// Open opens the file rel inside the pack fsys (the data embedded in the
// binary, or a folder through os.DirFS), decompressing it when its name ends
// in .gz. When only the uncompressed file is there (an operator who unpacked
// the data, or the hand-written text fixtures in testdata/), that is read
// instead. The caller closes the returned reader.
func Open(fsys fs.FS, rel string) (io.ReadCloser, error) {
	f, err := fsys.Open(rel)
	if err != nil && strings.HasSuffix(rel, ".gz") && errors.Is(err, fs.ErrNotExist) {
		if plain, perr := fsys.Open(strings.TrimSuffix(rel, ".gz")); perr == nil {
			f, err = plain, nil
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", rel, ErrMissing)
		}
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	// The name of the file actually opened decides, not rel: a manifest
	// may list a catalog source under another name (Manifest.FS).
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !strings.HasSuffix(st.Name(), ".gz") {
		return f, nil
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a valid gzip file: %w", rel, err)
	}
	return gzipFile{zr, f}, nil
}

type gzipFile struct {
	*gzip.Reader
	file fs.File
}

func (g gzipFile) Close() error {
	g.Reader.Close()
	return g.file.Close()
}

// ReadAll returns the whole (decompressed) content of rel.
func ReadAll(fsys fs.FS, rel string) ([]byte, error) {
	r, err := Open(fsys, rel)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return b, nil
}

// Table reads a delimited text table with a header row. Column lookups are
// by header name; every parse error names the file, the line and the column.
type Table struct {
	file   string
	r      *csv.Reader
	closer io.Closer
	cols   map[string]int
	row    []string
	line   int
	rows   int
	err    error
}

// OpenTable opens rel in fsys as a comma-separated table and checks that every
// column in required is present in its header.
func OpenTable(fsys fs.FS, rel string, required ...string) (*Table, error) {
	return OpenTableSep(fsys, rel, ',', required...)
}

// OpenTableSep is OpenTable with another field separator (tab for the Census
// Gazetteer files).
func OpenTableSep(fsys fs.FS, rel string, sep rune, required ...string) (*Table, error) {
	rc, err := Open(fsys, rel)
	if err != nil {
		return nil, err
	}
	t, err := NewTable(rel, rc, sep, required...)
	if err != nil {
		rc.Close()
		return nil, err
	}
	t.closer = rc
	return t, nil
}

// NewTable reads a table from r; name is used in error messages.
func NewTable(name string, r io.Reader, sep rune, required ...string) (*Table, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.Comma = sep
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.LazyQuotes = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s line 1: reading header: %w", name, err)
	}
	t := &Table{file: name, r: cr, cols: make(map[string]int, len(header)), line: 1}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := t.cols[h]; !dup {
			t.cols[h] = i
		}
	}
	var missing []string
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			missing = append(missing, strconv.Quote(c))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s line 1: header lacks column(s) %s", name, strings.Join(missing, ", "))
	}
	return t, nil
}

// Scan advances to the next row, like bufio.Scanner: it returns false at
// the end of the table or on a read error, which Err then reports.
//
//	for t.Scan() {
//		... t.String(col), t.Float(col) ...
//	}
//	if err := t.Err(); err != nil { ... }
func (t *Table) Scan() bool {
	if t.err != nil {
		return false
	}
	row, err := t.r.Read()
	if err == io.EOF {
		return false
	}
	line, _ := t.r.FieldPos(0)
	t.line = line
	if err != nil {
		t.err = fmt.Errorf("%s line %d: %w", t.file, t.line, err)
		return false
	}
	t.row = row
	t.rows++
	return true
}

// Err is the read error that stopped Scan, or nil at a clean end.
func (t *Table) Err() error { return t.err }

// Close releases the underlying file.
func (t *Table) Close() error {
	if t.closer != nil {
		return t.closer.Close()
	}
	return nil
}

// Rows is the number of data rows read so far.
func (t *Table) Rows() int { return t.rows }

// Has reports whether the header has column col.
func (t *Table) Has(col string) bool { _, ok := t.cols[col]; return ok }

// String returns the trimmed text of column col in the current row ("" when
// the row is short or the column unknown).
func (t *Table) String(col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(t.row) {
		return ""
	}
	return strings.TrimSpace(t.row[i])
}

// Float parses column col as a number. Empty cells and the placeholders in
// nulls are an error; use OptFloat where a cell may be blank.
func (t *Table) Float(col string) (float64, error) {
	v, ok, err := t.OptFloat(col)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, t.Errorf("column %q is empty", col)
	}
	return v, nil
}

// OptFloat parses column col as a number; ok is false when the cell is empty
// or one of the data sets' null markers (NA, -9999).
func (t *Table) OptFloat(col string) (v float64, ok bool, err error) {
	s := t.String(col)
	switch s {
	case "", "NA", "-9999", "-9999.0", "-":
		return 0, false, nil
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, t.Errorf("column %q: %q is not a number", col, s)
	}
	return v, true, nil
}

// Errorf returns an error that names the file and the current line.
func (t *Table) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s line %d: %s", t.file, t.line, fmt.Sprintf(format, args...))
}

// FIPS5 zero-pads a county FIPS code given without leading zeros ("1001" ->
// "01001"). It returns "" for anything that is not 1..5 digits.
func FIPS5(s string) string {
	s = strings.Trim(strings.TrimSpace(s), "\"")
	if len(s) == 0 || len(s) > 5 {
		return ""
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return strings.Repeat("0", 5-len(s)) + s
}

// FIPSNumber turns a 5-digit FIPS string into its number, for compact
// county-keyed tables, or -1 when it is not exactly five digits.
func FIPSNumber(fips string) int {
	if len(fips) != 5 {
		return -1
	}
	n := 0
	for i := 0; i < 5; i++ {
		c := fips[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// DirFS is the data pack in folder dir (--data-dir), checked to be a folder
// so that the operator sees the real cause before anything else is read.
func DirFS(dir string) (fs.FS, error) {
	if dir == "" {
		return nil, errors.New("no data folder given")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data folder %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("data folder %s is not a directory", dir)
	}
	return os.DirFS(dir), nil
}
