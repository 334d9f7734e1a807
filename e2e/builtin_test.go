package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/risk/data"
)

// TestBuiltInData: with no --data-dir and no LOCRISK_DATA_DIR, the binary
// serves real reports from the data built into it. Its first start builds
// the reference with progress in the log, a report carries the data
// version derived from the built-in manifest and the manifest's vintages,
// and the second start on the same database reads the reference back.
func TestBuiltInData(t *testing.T) {
	m, err := data.ReadManifest(datapack.FS())
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "builtin.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read")
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json"}

	srv := startServer(t, nil, args...)
	loaded := engineLoaded(t, srv)
	if loaded["data_version"] != m.Version() || loaded["reference_cached"] != false {
		t.Errorf("first start: %v; want data_version %s, reference built", loaded, m.Version())
	}
	if !strings.Contains(strings.Join(srv.log.Lines(), "\n"), "building the population-weighted reference") {
		t.Error("the first start logged no progress line while building the reference")
	}

	id := srv.createJob(t, key, point{"Chicago", 41.8781, -87.6298, "17031"})
	j := srv.waitJob(t, key, id, time.Minute)
	if j.Status != "completed" || j.Result == nil {
		t.Fatalf("job %s: %+v", id, j)
	}
	r := srv.do(t, key, http.MethodGet, j.Result.ReportURL+"?detail=full", nil)
	if r.status != http.StatusOK {
		t.Fatalf("report: %d %s", r.status, r.body)
	}
	rep := r.object(t)
	if rep["dataVersion"] != m.Version() {
		t.Errorf("report dataVersion %v, want %s", rep["dataVersion"], m.Version())
	}
	full, _ := rep["report"].(map[string]any)
	sources, _ := full["sources"].([]any)
	vintages := map[string]any{}
	for _, s := range sources {
		if src, ok := s.(map[string]any); ok {
			vintages[src["id"].(string)] = src["version"]
		}
	}
	if len(vintages) < 20 || vintages["fema-nri-v1.20"] != m.Vintage("fema-nri-v1.20") {
		t.Errorf("report sources %v; want the manifest's vintages (fema-nri-v1.20: %q)", vintages, m.Vintage("fema-nri-v1.20"))
	}
	if code, _ := srv.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}

	again := startServer(t, nil, args...)
	if loaded := engineLoaded(t, again); loaded["data_version"] != m.Version() || loaded["reference_cached"] != true {
		t.Errorf("second start: %v; want the cached reference of %s", loaded, m.Version())
	}
}

// engineLoaded is the server's "risk engine loaded" log record.
func engineLoaded(t *testing.T, s *server) map[string]any {
	t.Helper()
	for _, rec := range s.log.records() {
		if rec["msg"] == "risk engine loaded" {
			return rec
		}
	}
	t.Fatal("no \"risk engine loaded\" line in the log")
	return nil
}
