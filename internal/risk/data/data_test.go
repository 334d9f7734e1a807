package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "packed.csv.gz"), gzipBytes(t, []byte("x,y\n1,2\n")))
	writeFile(t, filepath.Join(dir, "a", "plain.csv"), []byte("plain text\n"))
	// Both forms present: the .gz named is the one read.
	writeFile(t, filepath.Join(dir, "a", "both.csv.gz"), gzipBytes(t, []byte("from gz\n")))
	writeFile(t, filepath.Join(dir, "a", "both.csv"), []byte("from plain\n"))
	// A .gz name that is not gzip, and a gzip stream cut short.
	writeFile(t, filepath.Join(dir, "a", "corrupt.csv.gz"), []byte("x,y\n1,2\n"))
	full := gzipBytes(t, bytes.Repeat([]byte("0123456789,abcdef\n"), 500))
	writeFile(t, filepath.Join(dir, "a", "truncated.csv.gz"), full[:len(full)/2])
	// A file asked for without .gz is never decompressed.
	writeFile(t, filepath.Join(dir, "a", "raw.bin"), gzipBytes(t, []byte("hidden")))

	tests := []struct {
		rel     string
		want    string // content; "" with wantErr
		wantErr string // substring of Open's or the read's error
	}{
		{rel: "a/packed.csv.gz", want: "x,y\n1,2\n"},
		{rel: "a/plain.csv.gz", want: "plain text\n"},
		{rel: "a/plain.csv", want: "plain text\n"},
		{rel: "a/both.csv.gz", want: "from gz\n"},
		{rel: "a/corrupt.csv.gz", wantErr: "not a valid gzip file"},
		{rel: "a/truncated.csv.gz", wantErr: "unexpected EOF"},
		{rel: "a/raw.bin", want: string(gzipBytes(t, []byte("hidden")))},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			b, err := ReadAll(os.DirFS(dir), tc.rel)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ReadAll(%s): error %v, want one containing %q", tc.rel, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.rel) {
					t.Errorf("error %q does not name the file %s", err, tc.rel)
				}
				if errors.Is(err, ErrMissing) {
					t.Errorf("a damaged file is reported as missing: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadAll(%s): %v", tc.rel, err)
			}
			if string(b) != tc.want {
				t.Errorf("ReadAll(%s) = %q, want %q", tc.rel, b, tc.want)
			}
		})
	}
}

func TestOpenClosesAndReadsTwice(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f.csv.gz"), gzipBytes(t, []byte("hello")))
	for i := 0; i < 2; i++ {
		rc, err := Open(os.DirFS(dir), "f.csv.gz")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		if err != nil || string(b) != "hello" {
			t.Fatalf("read %q, %v", b, err)
		}
		if err := rc.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestOpenMissing(t *testing.T) {
	dir := t.TempDir()
	for _, rel := range []string{"nope.csv", "nope.csv.gz", "sub/dir/nope.geojson.gz"} {
		_, err := Open(os.DirFS(dir), rel)
		if !errors.Is(err, ErrMissing) {
			t.Fatalf("Open(%s): error %v, want one wrapping ErrMissing", rel, err)
		}
		if !strings.Contains(err.Error(), rel) {
			t.Errorf("Open(%s): error %q should name the file", rel, err)
		}
		if _, err := ReadAll(os.DirFS(dir), rel); !errors.Is(err, ErrMissing) {
			t.Errorf("ReadAll(%s): error %v, want one wrapping ErrMissing", rel, err)
		}
	}
	// A directory where a file is expected is an error, but not "missing".
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll(os.DirFS(dir), "adir"); err == nil || errors.Is(err, ErrMissing) {
		t.Errorf("ReadAll of a directory: error %v, want a read error that is not ErrMissing", err)
	}
}

func newTestTable(t *testing.T, text string, required ...string) *Table {
	t.Helper()
	tb, err := NewTable("t.csv", strings.NewReader(text), ',', required...)
	if err != nil {
		t.Fatalf("NewTable: %v", err)
	}
	return tb
}

func TestTableHeader(t *testing.T) {
	tb := newTestTable(t, "\ufeffFIPS, name ,value\n06075,San Francisco,1\n", "FIPS", "name", "value")
	for _, c := range []string{"FIPS", "name", "value"} {
		if !tb.Has(c) {
			t.Errorf("Has(%q) = false after a BOM and spaces in the header", c)
		}
	}
	if tb.Has("\ufeffFIPS") || tb.Has(" name ") || tb.Has("other") {
		t.Error("Has reports a column that is not there")
	}
	if ok, err := scan(tb); !ok || err != nil {
		t.Fatalf("Scan = %v, Err = %v", ok, err)
	}
	if got := tb.String("FIPS"); got != "06075" {
		t.Errorf("String(FIPS) = %q", got)
	}
	if got := tb.String("other"); got != "" {
		t.Errorf("String of an unknown column = %q, want empty", got)
	}

	// A duplicated header name: the first column wins.
	tb = newTestTable(t, "a,a\n1,2\n")
	scan(tb)
	if got := tb.String("a"); got != "1" {
		t.Errorf("duplicated column: String = %q, want the first (1)", got)
	}
}

func TestTableMissingColumns(t *testing.T) {
	_, err := NewTable("nri/t.csv", strings.NewReader("STCOFIPS,RISK_SCORE\n01001,1\n"), ',', "STCOFIPS", "EAL_SCORE", "SOVI_SCORE")
	if err == nil {
		t.Fatal("NewTable accepted a header without required columns")
	}
	for _, want := range []string{"nri/t.csv", "line 1", `"EAL_SCORE"`, `"SOVI_SCORE"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), `"STCOFIPS"`) {
		t.Errorf("error %q names a column that is present", err)
	}
	_, err = NewTable("empty.csv", strings.NewReader(""), ',')
	if err == nil || !strings.Contains(err.Error(), "empty.csv line 1") {
		t.Errorf("empty input: error %v, want one naming the file and line 1", err)
	}
}

func TestOpenTable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "g", "gaz.txt"), []byte("GEOID\tINTPTLAT\tINTPTLONG\n06075\t37.75\t-122.44\n"))
	writeFile(t, filepath.Join(dir, "g", "t.csv"), []byte("a,b\n1,2\n3,4\n"))
	tb, err := OpenTableSep(os.DirFS(dir), "g/gaz.txt", '\t', "GEOID", "INTPTLAT")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := scan(tb); !ok || err != nil {
		t.Fatalf("Scan = %v, Err = %v", ok, err)
	}
	if v, err := tb.Float("INTPTLONG"); err != nil || v != -122.44 {
		t.Errorf("Float(INTPTLONG) = %v, %v", v, err)
	}
	if err := tb.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	tb, err = OpenTable(os.DirFS(dir), "g/t.csv.gz", "a")
	if err != nil {
		t.Fatalf("OpenTable through the uncompressed fallback: %v", err)
	}
	n := 0
	for {
		ok, err := scan(tb)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		n++
	}
	if n != 2 || tb.Rows() != 2 {
		t.Errorf("read %d rows, Rows() = %d; want 2", n, tb.Rows())
	}
	tb.Close()

	if _, err := OpenTable(os.DirFS(dir), "g/t.csv", "zzz"); err == nil || !strings.Contains(err.Error(), `"zzz"`) {
		t.Errorf("OpenTable with a missing column: %v", err)
	}
	if _, err := OpenTable(os.DirFS(dir), "g/none.csv"); !errors.Is(err, ErrMissing) {
		t.Errorf("OpenTable of a missing file: %v, want ErrMissing", err)
	}
	// NewTable tables have nothing to close.
	if err := newTestTable(t, "a\n").Close(); err != nil {
		t.Errorf("Close of a reader-backed table: %v", err)
	}
}

func TestTableFloats(t *testing.T) {
	text := "id,v\n" +
		"empty,\n" +
		"na,NA\n" +
		"nodata,-9999\n" +
		"nodata2,-9999.0\n" +
		"dash,-\n" +
		"spaces,  2.5  \n" +
		"neg,-1e3\n" +
		"bad,12abc\n" +
		"short\n"
	type want struct {
		v       float64
		ok      bool
		optErr  bool
		floatOK bool
	}
	wants := map[string]want{
		"empty":   {0, false, false, false},
		"na":      {0, false, false, false},
		"nodata":  {0, false, false, false},
		"nodata2": {0, false, false, false},
		"dash":    {0, false, false, false},
		"spaces":  {2.5, true, false, true},
		"neg":     {-1000, true, false, true},
		"bad":     {0, false, true, false},
		"short":   {0, false, false, false},
	}
	tb := newTestTable(t, text, "id", "v")
	seen := 0
	for {
		ok, err := scan(tb)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		seen++
		id := tb.String("id")
		w, found := wants[id]
		if !found {
			t.Fatalf("unexpected row %q", id)
		}
		v, ok2, err := tb.OptFloat("v")
		if (err != nil) != w.optErr || ok2 != w.ok || v != w.v {
			t.Errorf("%s: OptFloat = %v, %v, %v; want %v, %v, err=%v", id, v, ok2, err, w.v, w.ok, w.optErr)
		}
		fv, ferr := tb.Float("v")
		if (ferr == nil) != w.floatOK || (ferr == nil && fv != w.v) {
			t.Errorf("%s: Float = %v, %v", id, fv, ferr)
		}
		if ferr != nil {
			// Every error names the file, the line and the column.
			line := "line " + strconv.Itoa(tb.lineNumber())
			for _, s := range []string{"t.csv", line, `"v"`} {
				if !strings.Contains(ferr.Error(), s) {
					t.Errorf("%s: Float error %q does not contain %q", id, ferr, s)
				}
			}
		}
		if id == "bad" && (err == nil || !strings.Contains(err.Error(), `"12abc"`) || !strings.Contains(err.Error(), "t.csv line 9")) {
			t.Errorf("bad number: error %v, want the file, line 9 and the text", err)
		}
	}
	if seen != len(wants) || tb.Rows() != seen {
		t.Errorf("saw %d rows, Rows() = %d; want %d", seen, tb.Rows(), len(wants))
	}
}

func TestTableLineNumbers(t *testing.T) {
	text := "id,note,v\n" + // line 1
		"a,plain,1\n" + // line 2
		"b,\"quoted, with a comma\",2\n" + // line 3
		"c,\"two\nlines\",3\n" + // lines 4-5
		"\n" + // line 6: blank, skipped
		"d,\"three\nmore\nlines, and a \"\"quote\"\"\",4\n" + // lines 7-9
		"e,last,x\n" // line 10
	tb := newTestTable(t, text, "id", "note", "v")
	wantLines := map[string]int{"a": 2, "b": 3, "c": 4, "d": 7, "e": 10}
	wantNotes := map[string]string{"b": "quoted, with a comma", "c": "two\nlines", "d": "three\nmore\nlines, and a \"quote\""}
	rows := 0
	for {
		ok, err := scan(tb)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		rows++
		if tb.Rows() != rows {
			t.Errorf("Rows() = %d after %d rows", tb.Rows(), rows)
		}
		id := tb.String("id")
		if got := tb.lineNumber(); got != wantLines[id] {
			t.Errorf("row %s: Line() = %d, want %d", id, got, wantLines[id])
		}
		if n, ok := wantNotes[id]; ok && tb.String("note") != n {
			t.Errorf("row %s: note = %q, want %q", id, tb.String("note"), n)
		}
		if id == "e" {
			_, err := tb.Float("v")
			if err == nil || !strings.Contains(err.Error(), "t.csv line 10") || !strings.Contains(err.Error(), `"v"`) {
				t.Errorf("row e: Float error %v, want one naming t.csv line 10 and column v", err)
			}
		}
	}
	if rows != 5 {
		t.Errorf("read %d rows, want 5", rows)
	}
	// Past the end Scan keeps saying no.
	if ok, err := scan(tb); ok || err != nil {
		t.Errorf("Scan after the end = %v, Err = %v", ok, err)
	}
	if tb.Rows() != 5 {
		t.Errorf("Rows() = %d after the end, want 5", tb.Rows())
	}
}

func TestTableReadErrorNamesLine(t *testing.T) {
	// A gzip stream cut short fails in the middle of the table.
	full := gzipBytes(t, []byte("a,b\n"+strings.Repeat("1,2\n", 20000)))
	zr, err := gzip.NewReader(bytes.NewReader(full[:len(full)-40]))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := NewTable("cut.csv.gz", zr, ',', "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	for {
		ok, err := scan(tb)
		if err != nil {
			if !strings.Contains(err.Error(), "cut.csv.gz line ") {
				t.Errorf("read error %q does not name the file and line", err)
			}
			return
		}
		if !ok {
			t.Fatalf("a truncated gzip stream read to the end without error after %d rows", tb.Rows())
		}
	}
}

func TestFIPS5(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1001", "01001"},
		{"06075", "06075"},
		{"6075", "06075"},
		{" 6075 ", "06075"},
		{`"6075"`, "06075"},
		{"1", "00001"},
		{"0", "00000"},
		{"72127", "72127"},
		{"", ""},
		{"  ", ""},
		{`""`, ""},
		{"123456", ""},
		{"12a", ""},
		{"-1001", ""},
		{"1001.0", ""},
		{"٣٤", ""}, // non-ASCII digits
	}
	for _, tc := range tests {
		if got := FIPS5(tc.in); got != tc.want {
			t.Errorf("FIPS5(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCatalog(t *testing.T) {
	cat := Catalog()
	if len(cat) == 0 {
		t.Fatal("empty catalog")
	}
	ids := map[string]bool{}
	paths := map[string]bool{}
	for _, s := range cat {
		if s.ID == "" || s.Path == "" || s.Name == "" || s.Publisher == "" || s.Module == "" || s.HomeURL == "" {
			t.Errorf("incomplete catalog entry %+v", s)
		}
		if ids[s.ID] || paths[s.Path] {
			t.Errorf("duplicate id or path: %s %s", s.ID, s.Path)
		}
		ids[s.ID], paths[s.Path] = true, true
		if strings.HasPrefix(s.Path, "/") || strings.Contains(s.Path, `\`) || strings.Contains(s.Path, "..") {
			t.Errorf("%s: path %q is not a clean relative slash path", s.ID, s.Path)
		}
		if !strings.HasPrefix(s.HomeURL, "https://") {
			t.Errorf("%s: home URL %q is not https", s.ID, s.HomeURL)
		}
		got, ok := SourceByID(s.ID)
		if !ok || got != s {
			t.Errorf("SourceByID(%s) = %+v, %v", s.ID, got, ok)
		}
		if p := Path(s.ID); p != s.Path {
			t.Errorf("Path(%s) = %q, want %q", s.ID, p, s.Path)
		}
	}
	// Catalog returns a copy: callers cannot edit the package's table.
	cat[0].Path = "changed"
	if Catalog()[0].Path == "changed" {
		t.Error("Catalog returned the package's own slice")
	}
	if _, ok := SourceByID("no-such-source"); ok {
		t.Error("SourceByID found an unknown id")
	}
}

func TestPathPanicsOnUnknownID(t *testing.T) {
	defer func() {
		v := recover()
		if v == nil {
			t.Fatal("Path of an unknown id did not panic")
		}
		if s, _ := v.(string); !strings.Contains(s, "no-such-source") {
			t.Errorf("panic value %v does not name the id", v)
		}
	}()
	Path("no-such-source")
}

// populate writes a small placeholder for every catalog file in dir and a
// manifest listing them, some under other names than the catalog's, as a
// data update may (Manifest.FS).
func populate(t *testing.T, dir string) *Manifest {
	t.Helper()
	m := &Manifest{}
	for i, s := range Catalog() {
		path := s.Path
		if i%3 == 1 {
			path = "renamed/" + strings.ReplaceAll(s.Path, "/", "_")
		}
		body := []byte("placeholder " + s.ID + "\n")
		writeFile(t, filepath.Join(dir, filepath.FromSlash(path)), body)
		size, sum, err := fileSum(os.DirFS(dir), path)
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, ManifestFile{Path: path, SourceID: s.ID, Publisher: "p", Dataset: "d", Vintage: "v-" + s.ID,
			Licence: "l", Origin: "o", Bytes: size, SHA256: sum})
	}
	return m
}

func TestManifestMissingAndCatalogFS(t *testing.T) {
	dir := t.TempDir()
	m := populate(t, dir)
	fsys := os.DirFS(dir)
	if miss := m.Missing(fsys); len(miss) != 0 {
		t.Fatalf("Missing = %v; want none", miss)
	}
	// Every catalog path opens through the manifest, renamed or not; a
	// placeholder renamed without .gz is read as it is.
	cat := m.FS(fsys)
	for _, s := range Catalog() {
		b, err := ReadAll(cat, s.Path)
		if err != nil && !strings.Contains(err.Error(), "not a valid gzip") {
			t.Errorf("ReadAll(%s): %v", s.Path, err)
		}
		if err == nil && string(b) != "placeholder "+s.ID+"\n" {
			t.Errorf("ReadAll(%s) = %q", s.Path, b)
		}
		if m.Vintage(s.ID) != "v-"+s.ID {
			t.Errorf("Vintage(%s) = %q", s.ID, m.Vintage(s.ID))
		}
	}
	// Files the manifest does not list are named (hidden ones are not).
	writeFile(t, filepath.Join(dir, "notes", "README.txt"), []byte("x"))
	writeFile(t, filepath.Join(dir, ".locrisk-new-1", "x.csv"), []byte("x"))
	if got, err := m.Unlisted(fsys); err != nil || len(got) != 1 || got[0] != "notes/README.txt" {
		t.Errorf("Unlisted = %v, %v; want [notes/README.txt]", got, err)
	}
	gone := m.Files[3]
	os.Remove(filepath.Join(dir, filepath.FromSlash(gone.Path)))
	if miss := m.Missing(fsys); len(miss) != 1 || miss[0].Path != gone.Path || miss[0].Problem != "missing" {
		t.Fatalf("Missing = %v, want only %s", miss, gone.Path)
	}
	err := MismatchError(m.Missing(fsys))
	if !strings.Contains(err.Error(), gone.Path) || !strings.Contains(err.Error(), ManifestName) {
		t.Errorf("MismatchError = %q", err)
	}
}

func TestDirFS(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, []byte("x"))
	nowhere := filepath.Join(t.TempDir(), "nowhere")
	for _, tc := range []struct {
		dir, want string
		notExist  bool
	}{
		{dir: "", want: "no data folder given"},
		{dir: file, want: file + " is not a directory"},
		{dir: nowhere, want: nowhere, notExist: true},
	} {
		_, err := DirFS(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, os.ErrNotExist) != tc.notExist {
			t.Errorf("DirFS(%q) error %v, want one containing %q (not-exist %v)", tc.dir, err, tc.want, tc.notExist)
		}
	}
	if _, err := DirFS(t.TempDir()); err != nil {
		t.Errorf("DirFS(empty folder): %v", err)
	}
}

// scan is one Scan with its error, for tests that check both at each row.
func scan(tb *Table) (bool, error) {
	ok := tb.Scan()
	return ok, tb.Err()
}

func TestFIPSNumber(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{{"06075", 6075}, {"72127", 72127}, {"00000", 0}, {"6075", -1}, {"060750", -1}, {"06a75", -1}, {"", -1}} {
		if got := FIPSNumber(tt.in); got != tt.want {
			t.Errorf("FIPSNumber(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// lineNumber is the line number of the current row, for the tests.
func (t *Table) lineNumber() int { return t.line }
