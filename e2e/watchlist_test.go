package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/webhookverify"
)

// The watchlist's items (docs/api.md, Watchlists): two near the Superfund
// site the changed pack adds in San Francisco (datatest.NewNPLSite), the
// others far from it.
var watchPoints = []point{
	{"San Francisco", 37.77, -122.42, "06075"},
	{"San Francisco 2", 37.7718, -122.4181, "06075"},
	{"Chicago", 41.88, -87.63, "17031"},
	{"Miami", 25.76, -80.19, "12086"},
	{"Oklahoma City", 35.47, -97.52, "40109"},
}

// changeReceiver is a loopback webhook receiver that verifies every
// delivery's signatures, the service's and Standard Webhooks', with the
// endpoint's secret, and keeps the report.changed ones.
type changeReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	got    []changeDelivery
	bad    []string
}

type changeDelivery struct {
	delivery string
	body     []byte
	data     changeData
}

// changeData is what the test reads of a report.changed event's data.
type changeData struct {
	WatchlistID      string  `json:"watchlistId"`
	ItemID           string  `json:"itemId"`
	ExternalID       string  `json:"externalId"`
	Latitude         float64 `json:"latitude"`
	PreviousReportID string  `json:"previousReportId"`
	CurrentReportID  string  `json:"currentReportId"`
	Previous         struct {
		DataVersion string `json:"dataVersion"`
	} `json:"previous"`
	Current struct {
		DataVersion        string  `json:"dataVersion"`
		MethodologyVersion *string `json:"methodologyVersion"`
		EngineVersion      *string `json:"engineVersion"`
	} `json:"current"`
	Overall struct {
		Material bool `json:"material"`
	} `json:"overall"`
	Changes []struct {
		Module   string `json:"module"`
		Material bool   `json:"material"`
	} `json:"changes"`
}

// material reports whether the event names a material change.
func (d changeData) material() bool {
	m := d.Overall.Material
	for _, c := range d.Changes {
		m = m || c.Material
	}
	return m
}

func newChangeReceiver(t *testing.T) *changeReceiver {
	rc := &changeReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		// Signed by both schemes: the service's and Standard Webhooks'.
		if err := webhookverify.VerifyHeader(rc.secret, r.Header, body, time.Now(), 5*time.Minute); err != nil {
			rc.bad = append(rc.bad, fmt.Sprintf("%s: %v", r.Header.Get("Service-Delivery"), err))
		}
		if err := webhookverify.VerifyStandardHeader(rc.secret, r.Header, body, time.Now(), 5*time.Minute); err != nil {
			rc.bad = append(rc.bad, fmt.Sprintf("%s (Standard Webhooks): %v", r.Header.Get("Service-Delivery"), err))
		}
		var ev struct {
			Type string     `json:"type"`
			Data changeData `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "report.changed" || r.Header.Get("Service-Event") != ev.Type {
			rc.bad = append(rc.bad, fmt.Sprintf("not a report.changed event (%v): %s", err, body))
		} else {
			rc.got = append(rc.got, changeDelivery{r.Header.Get("Service-Delivery"), body, ev.Data})
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *changeReceiver) deliveries() []changeDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// watchItem is what the test reads of an item (GET .../items).
type watchItem struct {
	ItemID           string  `json:"itemId"`
	ExternalID       string  `json:"externalId"`
	Status           *string `json:"status"`
	ReportID         *string `json:"reportId"`
	PreviousReportID *string `json:"previousReportId"`
	Changed          bool    `json:"changed"`
	Versions         *struct {
		DataVersion string `json:"dataVersion"`
	} `json:"versions"`
}

// watchedItems reads every item of the list (they fit one page).
func watchedItems(t *testing.T, s *server, key, list string) []watchItem {
	t.Helper()
	r := s.do(t, key, http.MethodGet, "/api/v1/location-risk/watchlists/"+list+"/items?limit=100", nil)
	if r.status != http.StatusOK {
		t.Fatalf("items: %d %s", r.status, r.body)
	}
	var page struct {
		Items []watchItem `json:"items"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// waitItems polls the list until every item satisfies done.
func waitItems(t *testing.T, s *server, key, list, what string, timeout time.Duration, done func(watchItem) bool) []watchItem {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		items := watchedItems(t, s, key, list)
		all := len(items) > 0
		for _, it := range items {
			all = all && it.Status != nil && *it.Status == "completed" && done(it)
		}
		if all {
			return items
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %+v", what, items)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settled waits until the endpoint has no delivery pending, and returns
// its report.changed deliveries as operation 17 lists them.
func settled(t *testing.T, s *server, key, endpoint string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := s.do(t, key, http.MethodGet, "/api/v1/webhooks/deliveries?limit=100&endpointId="+url.QueryEscape(endpoint), nil)
		var list struct {
			Deliveries []struct {
				Event  string `json:"event"`
				Status string `json:"status"`
			} `json:"deliveries"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &list) != nil {
			t.Fatalf("deliveries: %d %s", r.status, r.body)
		}
		pending, changed := 0, 0
		for _, d := range list.Deliveries {
			if d.Status == "pending" {
				pending++
			}
			if d.Event == "report.changed" {
				changed++
			}
		}
		if pending == 0 {
			return changed
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending", pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// materialItems asks operation 21 which items' current report differs
// materially from their previous one at minScoreChange: the items that
// must have had one report.changed each.
func materialItems(t *testing.T, s *server, key string, items []watchItem, minScoreChange int) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, it := range items {
		if it.PreviousReportID == nil {
			continue
		}
		r := s.do(t, key, http.MethodGet, fmt.Sprintf("/api/v1/location-risk/reports/%s/changes?since=%s&minScoreChange=%d",
			*it.ReportID, *it.PreviousReportID, minScoreChange), nil)
		var c struct {
			Material bool `json:"material"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &c) != nil {
			t.Fatalf("changes of %s: %d %s", it.ItemID, r.status, r.body)
		}
		if c.Material {
			out[it.ItemID] = true
		}
	}
	return out
}

// watchScenario is the watchlist of watchPoints, created on a server of
// the first data, with its webhook endpoint.
type watchScenario struct {
	key, list, endpoint string
	rc                  *changeReceiver
}

// newWatchScenario creates the endpoint (report.changed) and the list on
// s and waits until every item has its first report.
func newWatchScenario(t *testing.T, s *server, key string) watchScenario {
	t.Helper()
	sc := watchScenario{key: key, rc: newChangeReceiver(t)}
	r := s.do(t, key, http.MethodPost, "/api/v1/webhooks", map[string]any{
		"name": "changes", "url": sc.rc.srv.URL, "events": []string{"report.changed"}})
	if r.status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	created := r.object(t)
	sc.rc.mu.Lock()
	sc.rc.secret = created["signingSecret"].(string)
	sc.rc.mu.Unlock()
	sc.endpoint = created["endpoint"].(map[string]any)["id"].(string)
	var items []map[string]any
	for _, p := range watchPoints {
		items = append(items, map[string]any{"externalId": p.name, "latitude": p.lat, "longitude": p.lon})
	}
	r = s.do(t, key, http.MethodPost, "/api/v1/location-risk/watchlists", map[string]any{"name": "book", "items": items})
	if r.status != http.StatusCreated {
		t.Fatalf("create watchlist: %d %s", r.status, r.body)
	}
	sc.list = r.object(t)["watchlist"].(map[string]any)["watchlistId"].(string)
	waitItems(t, s, key, sc.list, "the items' first reports", 2*time.Minute, func(it watchItem) bool { return it.ReportID != nil })
	return sc
}

// checkChanges waits until every item follows dataVersion and the
// deliveries have settled, then checks that exactly the items operation
// 21 finds changed materially got report.changed, one each, signed, with
// their reports and versions, and that those of wantChanged did and those
// of wantSame did not; it returns the items.
func (sc watchScenario) checkChanges(t *testing.T, s *server, dataVersion string, wantChanged, wantSame []string) []watchItem {
	t.Helper()
	items := waitItems(t, s, sc.key, sc.list, "the re-scores to "+dataVersion, 3*time.Minute, func(it watchItem) bool {
		return it.Versions != nil && it.Versions.DataVersion == dataVersion
	})
	listed := settled(t, s, sc.key, sc.endpoint)
	material := materialItems(t, s, sc.key, items, 5)
	byItem := map[string][]changeDelivery{}
	for _, d := range sc.rc.deliveries() {
		if d.data.Current.DataVersion == dataVersion {
			byItem[d.data.ItemID] = append(byItem[d.data.ItemID], d)
		}
	}
	sc.rc.mu.Lock()
	if len(sc.rc.bad) > 0 {
		t.Errorf("deliveries refused by the receiver: %v", sc.rc.bad)
	}
	sc.rc.mu.Unlock()
	names := map[string]string{}
	for _, it := range items {
		names[it.ItemID] = it.ExternalID
		ds := byItem[it.ItemID]
		switch {
		case material[it.ItemID] && len(ds) != 1:
			t.Errorf("item %s (%s) changed materially and got %d report.changed, want 1", it.ItemID, it.ExternalID, len(ds))
		case !material[it.ItemID] && len(ds) != 0:
			t.Errorf("item %s (%s) did not change materially and got %d report.changed: %s", it.ItemID, it.ExternalID, len(ds), ds[0].body)
		case len(ds) == 1:
			d := ds[0].data
			if d.WatchlistID != sc.list || d.ExternalID != it.ExternalID || d.CurrentReportID != *it.ReportID ||
				it.PreviousReportID == nil || d.PreviousReportID != *it.PreviousReportID || d.Previous.DataVersion == dataVersion ||
				d.Current.MethodologyVersion == nil || d.Current.EngineVersion == nil || !d.material() || !it.Changed {
				t.Errorf("item %s: event %s\nitem %+v", it.ItemID, ds[0].body, it)
			}
		}
		if it.Changed != material[it.ItemID] {
			t.Errorf("item %s (%s): changed %v, operation 21 says material %v", it.ItemID, it.ExternalID, it.Changed, material[it.ItemID])
		}
	}
	var changed []string
	for id := range material {
		changed = append(changed, names[id])
	}
	slices.Sort(changed)
	t.Logf("items changed materially at %s: %v", dataVersion, changed)
	for _, name := range wantChanged {
		if !slices.Contains(changed, name) {
			t.Errorf("%s did not change materially; the changed pack adds a Superfund site beside it", name)
		}
	}
	for _, name := range wantSame {
		if slices.Contains(changed, name) {
			t.Errorf("%s, far from the change, changed materially", name)
		}
	}
	if listed != len(sc.rc.deliveries()) {
		t.Errorf("operation 17 lists %d report.changed deliveries, the receiver got %d", listed, len(sc.rc.deliveries()))
	}
	return items
}

// The built-in data, then a changed pack: a watchlist's items are scored
// on the built-in data; a restart on the same data re-scores nothing and
// sends nothing, and an on-demand re-score changes nothing material and
// sends nothing; a restart on the built-in pack exported with one file
// changed (a Superfund site added in San Francisco, the manifest updated)
// re-scores every item once, by itself, and exactly the items that changed
// materially get one signed report.changed each; a further restart on the
// changed pack re-scores nothing more.
func TestWatchlistFollowsTheData(t *testing.T) {
	needSignals(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "watch.db")
	_, key := newAccountKey(t, db, "watchlists:read,watchlists:write,webhooks:read,webhooks:write,reports:read")
	args := func(extra ...string) []string {
		return append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json",
			"--webhook-allow-private", "--webhook-retry-schedule", "1s", "--rescore-rate", "200"}, extra...)
	}
	env := map[string]string{"LOCRISK_DB": db}
	stop := func(s *server) {
		t.Helper()
		if code, _ := s.signal(syscall.SIGTERM); code != 0 {
			t.Fatalf("SIGTERM: exit %d", code)
		}
	}

	// A first start on a data version builds the engine's reference.
	const firstStart = 3 * time.Minute
	first := startServerWithin(t, firstStart, nil, args()...)
	sc := newWatchScenario(t, first, key)
	stop(first)

	// The same data: nothing to re-score, nothing sent.
	same := startServer(t, nil, args()...)
	if out := mustCLI(t, env, "watchlists", "plan"); !regexp.MustCompile(`(?m)^planned: 0$`).MatchString(out) {
		t.Errorf("watchlists plan on the served data: %q, want nothing planned", out)
	}
	if r := same.do(t, key, http.MethodPost, "/api/v1/location-risk/watchlists/"+sc.list+"/rescore", nil); r.status != http.StatusAccepted {
		t.Fatalf("rescore: %d %s", r.status, r.body)
	}
	items := waitItems(t, same, key, sc.list, "the on-demand re-scores", 2*time.Minute, func(it watchItem) bool { return it.PreviousReportID != nil })
	if n := settled(t, same, key, sc.endpoint); n != 0 || len(sc.rc.deliveries()) != 0 {
		t.Errorf("unchanged data: %d report.changed deliveries listed, %d received; want none", n, len(sc.rc.deliveries()))
	}
	for _, it := range items {
		if it.Changed {
			t.Errorf("item %s changed on unchanged data", it.ItemID)
		}
	}
	stop(same)

	// The built-in pack exported, one file changed by hand, the manifest
	// rewritten, as an operator does (docs/data.md, Replacing a data set).
	pack := filepath.Join(dir, "pack")
	mustCLI(t, env, "data", "export", pack)
	npl := filepath.Join(pack, filepath.FromSlash(datatest.NPLFixture))
	b, err := os.ReadFile(npl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(npl, append(b, datatest.NewNPLSite...), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCLI(t, env, "data", "manifest", pack)
	m, err := data.ReadManifest(os.DirFS(pack))
	if err != nil {
		t.Fatal(err)
	}
	changed := startServerWithin(t, firstStart, nil, args("--data-dir", pack)...)
	sc.checkChanges(t, changed, m.Version(), []string{"San Francisco"}, []string{"Chicago", "Miami", "Oklahoma City"})
	before := len(sc.rc.deliveries())
	stop(changed)

	// The changed pack again: every item follows it already.
	again := startServer(t, nil, args("--data-dir", pack)...)
	if out := mustCLI(t, env, "watchlists", "plan", "--data-dir", pack); !regexp.MustCompile(`(?m)^planned: 0$`).MatchString(out) {
		t.Errorf("watchlists plan on the changed pack, served: %q, want nothing planned", out)
	}
	time.Sleep(time.Second) // what the lane would start, it starts within its first poll
	if n := settled(t, again, key, sc.endpoint); n != before || len(sc.rc.deliveries()) != before {
		t.Errorf("after a restart on the same pack: %d deliveries listed, %d received; want %d, nothing new", n, len(sc.rc.deliveries()), before)
	}
}

// Two nodes on one PostgreSQL database started together on a changed
// pack: each plans the re-scores at its start, and every item is
// re-scored once, by one of them, with one report.changed for each item
// that changed materially. The fixture pack stands in for the built-in
// one here, to keep the two nodes' start short.
func TestWatchlistFollowsTheDataOnTwoNodes(t *testing.T) {
	needSignals(t)
	dsn := postgresDB(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "secret.key")
	if err := os.WriteFile(keyFile, []byte("c2VjcmV0LWtleS1vZi10aGUtd2F0Y2gtdGVzdC0zMmI=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LOCRISK_DB": dsn, "LOCRISK_SECRET_KEY_FILE": keyFile}
	account := mustCLI(t, env, "accounts", "create", "--name", "two nodes", "--rate-limit", "1000000")
	key := mustCLI(t, env, "keys", "create", "--account", account, "--scopes",
		"watchlists:read,watchlists:write,webhooks:read,webhooks:write,reports:read")
	args := func(pack string) []string {
		return []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", pack, "--log-format", "json",
			"--webhook-allow-private", "--webhook-retry-schedule", "1s", "--rescore-rate", "200"}
	}
	first := startServer(t, env, args(fixtureData)...)
	sc := newWatchScenario(t, first, key)
	if code, _ := first.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}

	pack := datatest.EditedFixture(t, datatest.NPLFixture, func(b []byte) []byte { return append(b, datatest.NewNPLSite...) })
	m, err := data.ReadManifest(os.DirFS(pack))
	if err != nil {
		t.Fatal(err)
	}
	var nodes [2]*server
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i] = startServer(t, env, args(pack)...)
		}()
	}
	wg.Wait()
	// The fixture world's reference is a few counties, so the site moves
	// the percentiles of places far from it too: which items change is
	// operation 21's to say.
	items := sc.checkChanges(t, nodes[0], m.Version(), []string{"San Francisco"}, nil)
	// Once per item: each item's previous report is its first one, so no
	// second re-score followed; and the jobs of every item are two.
	for _, it := range items {
		r := nodes[1].do(t, key, http.MethodGet, "/api/v1/location-risk/report-jobs?limit=100", nil)
		var page struct {
			Jobs []struct {
				WatchItemID *string `json:"watchItemId"`
			} `json:"jobs"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &page) != nil {
			t.Fatalf("jobs: %d %s", r.status, r.body)
		}
		n := 0
		for _, j := range page.Jobs {
			if j.WatchItemID != nil && *j.WatchItemID == it.ItemID {
				n++
			}
		}
		if n != 2 {
			t.Errorf("item %s (%s) has %d jobs, want 2: its first, and one re-score for both nodes", it.ItemID, it.ExternalID, n)
		}
	}
}

// A server killed (SIGKILL) while its re-scores run loses none and sends
// none twice: the next server takes the dead one's jobs back and
// completes each once, and every item that changed materially gets one
// report.changed. The fixture pack stands in for the built-in one, and a
// delay fault holds the re-scores long enough to kill the server under
// them.
func TestWatchlistRescoreSurvivesAKill(t *testing.T) {
	needSignals(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "watch.db")
	_, key := newAccountKey(t, db, "watchlists:read,watchlists:write,webhooks:read,webhooks:write,reports:read")
	args := func(pack string, extra ...string) []string {
		return append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--data-dir", pack, "--log-format", "json",
			"--webhook-allow-private", "--webhook-retry-schedule", "1s", "--rescore-rate", "200"}, extra...)
	}
	first := startServer(t, nil, args(fixtureData)...)
	sc := newWatchScenario(t, first, key)
	if code, _ := first.signal(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d", code)
	}

	pack := datatest.EditedFixture(t, datatest.NPLFixture, func(b []byte) []byte { return append(b, datatest.NewNPLSite...) })
	m, err := data.ReadManifest(os.DirFS(pack))
	if err != nil {
		t.Fatal(err)
	}
	slow := startServer(t, nil, args(pack, "--faults", "report.generate=delay:ms=5000")...)
	deadline := time.Now().Add(time.Minute)
	for {
		running := 0
		for _, it := range watchedItems(t, slow, key, sc.list) {
			if it.Status != nil && *it.Status == "processing" {
				running++
			}
		}
		if running == len(watchPoints) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the re-scores did not start: %d of %d running", running, len(watchPoints))
		}
		time.Sleep(20 * time.Millisecond)
	}
	slow.kill()
	if n := len(sc.rc.deliveries()); n != 0 {
		t.Fatalf("%d report.changed before any re-score completed", n)
	}

	next := startServer(t, nil, args(pack)...)
	items := sc.checkChanges(t, next, m.Version(), []string{"San Francisco"}, nil)
	// Each item's re-score is the one job the killed server started,
	// completed once: two jobs per item in all.
	r := next.do(t, key, http.MethodGet, "/api/v1/location-risk/report-jobs?limit=100", nil)
	var page struct {
		Jobs []struct {
			WatchItemID *string `json:"watchItemId"`
			Status      string  `json:"status"`
		} `json:"jobs"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &page) != nil {
		t.Fatalf("jobs: %d %s", r.status, r.body)
	}
	jobs := map[string]int{}
	for _, j := range page.Jobs {
		if j.WatchItemID != nil && j.Status == "completed" {
			jobs[*j.WatchItemID]++
		}
	}
	for _, it := range items {
		if jobs[it.ItemID] != 2 {
			t.Errorf("item %s (%s) has %d completed jobs, want 2", it.ItemID, it.ExternalID, jobs[it.ItemID])
		}
	}
}
