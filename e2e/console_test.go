package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's chromium (installed by .ci/run) with
// chromedp, against the real binary on the built-in data, through the web
// console (docs/console.md) as a person would use it. Screenshots of every
// page go to $LOCRISK_SCREENSHOTS when it is set (kept), else to a
// temporary directory (removed after the test); the test logs where.

// allScopes is every scope a key can hold (docs/api.md, Authentication).
const allScopes = "reports:create,reports:read,reports:pdf,bulk:create,bulk:read,usage:read,webhooks:read,webhooks:write,watchlists:read,watchlists:write"

// chromiumPath finds the browser, or skips the test saying why.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("LOCRISK_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary (looked for /usr/bin/chromium, chromium-browser and google-chrome on PATH, and $LOCRISK_CHROMIUM): " +
		"the browser tests of the web console need it; on Debian, apt-get install chromium (.ci/run does)")
	return ""
}

// browserSession is one headless chromium with one tab, and what the tab
// did: its console messages and the addresses it requested.
type browserSession struct {
	t         *testing.T
	ctx       context.Context
	shots     string
	downloads string
	// the viewport, as viewport last set it
	width, height int

	mu       sync.Mutex
	console  []chromedp.ConsoleMessage
	requests []string
}

func newBrowserSession(t *testing.T, chrome string) *browserSession {
	t.Helper()
	b := &browserSession{t: t, downloads: t.TempDir()}
	b.shots = os.Getenv("LOCRISK_SCREENSHOTS")
	if b.shots == "" {
		b.shots = t.TempDir()
		t.Logf("screenshots in %s (removed after the test; set LOCRISK_SCREENSHOTS=DIR to keep them)", b.shots)
	} else {
		if err := os.MkdirAll(b.shots, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshots in %s", b.shots)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox, // CI runs as root, where chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
		// Nothing but loopback: any other address goes to a proxy that is
		// not there (Chromium never proxies loopback), so a page that
		// reached out would fail, and the request list below would show it.
		chromedp.ProxyServer("127.0.0.1:9"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	b.ctx = ctx
	messages := chromedp.Console(ctx)
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
		return err
	})); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.requests = append(b.requests, ev.Request.URL)
			b.mu.Unlock()
		}
	}()
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: b.downloads, EventsEnabled: ptr(true),
	}); err != nil {
		t.Fatalf("downloads: %v", err)
	}
	b.viewport(1280, 900)
	return b
}

func ptr[T any](v T) *T { return &v }

func (b *browserSession) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a JavaScript expression in the page (through DevTools,
// which the page's CSP does not restrict; the page itself has no eval).
func eval[T any](b *browserSession, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor evaluates expr until it is true. (chromedp.Poll builds its
// predicate with new Function, which the console's CSP refuses.)
func (b *browserSession) waitFor(what, expr string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			loc := eval[string](b, "location.href")
			b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			b.t.Fatalf("waited %s for %s (%s) on %s; last error %v", timeout, what, expr, loc, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shot saves a screenshot of the whole page as name.png: the viewport is
// made as tall as the page for it (DevTools' capture beyond the viewport
// sometimes stops at the viewport), then set back.
func (b *browserSession) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	h := eval[int](b, "Math.ceil(document.documentElement.scrollHeight)")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(b.width), int64(max(h, b.height)))); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
	b.viewport(b.width, b.height)
}

// shotOf saves a screenshot of one element (sel) as name.png, for a
// section too small to judge in a whole page's picture.
func (b *browserSession) shotOf(name, sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(sel))
	if err == nil {
		err = os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
}

// viewport sets the page's width and height in CSS pixels.
func (b *browserSession) viewport(w, h int) {
	b.t.Helper()
	b.width, b.height = w, h
	b.do(chromedp.EmulateViewport(int64(w), int64(h)))
}

func (b *browserSession) navigate(url string) {
	b.t.Helper()
	b.do(chromedp.Navigate(url))
}

// problems is what the pages wrote to the console that a person would
// call a fault: errors, uncaught exceptions, CSP or Trusted Types
// violations, and warnings.
func (b *browserSession) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.console {
		if m.IsException() || m.Type == "error" || m.Type == "warning" || m.Source == "security" {
			out = append(out, m.String())
		}
	}
	return out
}

// TestConsoleInBrowser walks the console in headless chromium: sign in with
// a fresh key, pick a place on the map, create a report and see it (maps,
// six module cards, a verified signature), see a tampered report marked
// not verified, upload a CSV as a batch, follow it to completion and
// download its results, add a webhook endpoint that is a loopback
// receiver, send it a test event and see the delivery, read usage and the
// summary, all at 1280 and 360 pixels wide, and with a key of fewer
// scopes. Throughout: no console error or CSP violation, no request
// beyond the server's origin, and the key in no address and no log line.
func TestConsoleInBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	db := filepath.Join(t.TempDir(), "console.db")
	account, key := newAccountKey(t, db, allScopes)
	// The built-in data, for a real map and real reports: the first start
	// builds the engine's reference (a minute or two on a busy machine).
	srv := startBinaryWithin(t, binary, 5*time.Minute, nil,
		"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-format", "json", "--webhook-allow-private")
	b := newBrowserSession(t, chrome)

	// ---- sign in ----
	b.navigate(srv.base + "/console/")
	b.waitFor("the sign-in page", `location.pathname === '/console/signin' && document.getElementById('key')`, 15*time.Second)
	if got := eval[string](b, "location.search"); got != "?next=%2Fconsole%2F" {
		t.Errorf("redirected to sign in with %q, want ?next=%%2Fconsole%%2F", got)
	}
	b.shot("01-signin")
	b.do(chromedp.SendKeys("#key", key, chromedp.NodeVisible), chromedp.Click("#signin-submit", chromedp.NodeVisible))
	b.waitFor("the address page after signing in", `location.pathname === '/console/' && document.querySelectorAll('#usmap path.state').length > 0`, 15*time.Second)
	if n := eval[int](b, `document.querySelectorAll('#usmap path.state').length`); n != 53 {
		t.Errorf("the map draws %d states, want 53 (50, DC, Puerto Rico, the Virgin Islands)", n)
	}
	if got := eval[string](b, "sessionStorage.getItem('locrisk.apiKey')"); got != key {
		t.Errorf("sessionStorage holds %q, not the key", got)
	}
	if c := eval[string](b, "document.cookie"); c != "" {
		t.Errorf("the console set cookies: %q", c)
	}

	// ---- the first load's size ----
	// A cold load of the largest page (the map) and its files, without the
	// API's answers: at most 300 KB (docs/console.md, Performance).
	b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	}))
	b.navigate(srv.base + "/console/")
	b.waitFor("the address page", `document.querySelectorAll('#usmap path.state').length > 0 && document.readyState === 'complete'`, 15*time.Second)
	transfer := eval[float64](b, `performance.getEntriesByType('navigation')[0].transferSize +
		performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.startsWith('/console/')).reduce((s, e) => s + e.transferSize, 0)`)
	t.Logf("first load of /console/ (page, scripts, style, icon): %.0f bytes", transfer)
	if transfer <= 0 || transfer > 300<<10 {
		t.Errorf("the first load transfers %.0f bytes, over the 300 KB budget (or nothing measured)", transfer)
	}
	b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: false})
		return err
	}))

	// ---- one address: the map, then a report ----
	xy := eval[[]float64](b, `(() => {
		const p = document.querySelector('#usmap path[data-state="KS"]');
		p.scrollIntoView({block: 'center'});
		const bb = p.getBBox();
		const pt = new DOMPoint(bb.x + bb.width / 2, bb.y + bb.height / 2).matrixTransform(p.getScreenCTM());
		return [pt.x, pt.y];
	})()`)
	b.do(chromedp.MouseClickXY(xy[0], xy[1]))
	b.waitFor("the map click to fill the coordinate", `document.getElementById('lat').value !== ''`, 5*time.Second)
	lat := eval[string](b, `document.getElementById('lat').value`)
	lon := eval[string](b, `document.getElementById('lon').value`)
	var la, lo float64
	fmt.Sscan(lat, &la)
	fmt.Sscan(lon, &lo)
	if la < 37 || la > 40 || lo < -102.05 || lo > -94.6 {
		t.Errorf("a click in the middle of Kansas gave %s, %s, not a point in Kansas", lat, lon)
	}
	if txt := eval[string](b, `document.getElementById('map-pick').textContent`); !strings.Contains(txt, "Kansas") {
		t.Errorf("the map's note after the click: %q, want it to name Kansas", txt)
	}
	if hidden := eval[bool](b, `document.getElementById('marker').hasAttribute('hidden')`); hidden {
		t.Error("no marker on the map after the click")
	}
	b.shot("02-address-map-click")

	// New Orleans, typed.
	eval[bool](b, `(document.getElementById('lat').value = '', document.getElementById('lon').value = '', true)`)
	b.do(chromedp.SendKeys("#lat", "29.9511"), chromedp.SendKeys("#lon", "-90.0715"))
	b.do(chromedp.Click("#create"))
	b.waitFor("the report page", `location.pathname.startsWith('/console/reports/')`, 60*time.Second)
	b.waitFor("the module cards and the signature check",
		`document.querySelectorAll('#cards section.card').length === 6 && document.getElementById('badge').dataset.state`, 30*time.Second)
	reportURL := eval[string](b, "location.href")
	if st := eval[string](b, `document.getElementById('badge').dataset.state`); st != "verified" {
		t.Errorf("the signature badge says %q (%s), want verified", st, eval[string](b, `document.getElementById('verify-details').textContent`))
	}
	b.waitFor("the site maps", `document.querySelectorAll('#sitemaps svg.sitemap').length === 2`, 10*time.Second)
	shown := eval[float64](b, `performance.getEntriesByName('locrisk-report-shown')[0].startTime`)
	verified := eval[float64](b, `performance.getEntriesByName('locrisk-report-verified')[0].startTime`)
	t.Logf("report page: shown %.0f ms and verified %.0f ms after the address page saw the job completed and opened it (plus at most the 100 ms between polls)", shown, verified)
	for _, m := range []string{"hydrology", "severeWeather", "wildfire", "earthquake", "landslide", "environmentalExposure"} {
		words := eval[string](b, `(() => { const c = document.querySelector('#cards [data-module="`+m+`"]'); return c ? c.querySelector('.card-head').textContent : ''; })()`)
		if !regexp.MustCompile(`\d+\s*(Very low|Low|Moderate|High|Very high)|no data\s*No data`).MatchString(words) {
			t.Errorf("card %s: %q, want its score and level in words", m, words)
		}
	}
	if got := eval[string](b, `document.getElementById('place').textContent`); got != "Orleans Parish, Louisiana" {
		t.Errorf("report heading %q", got)
	}
	details := eval[string](b, `document.getElementById('verify-details').textContent`)
	for _, want := range []string{"Ed25519", "RFC 8785", "/.well-known/locrisk-signing-keys", "SHA-256"} {
		if !strings.Contains(details, want) {
			t.Errorf("the signature details do not say %q: %s", want, details)
		}
	}
	b.shot("03-report")

	// The outlook, after the cards: FEMA's projections for the county,
	// context only (docs/console.md, The report page).
	b.waitFor("the outlook", `!document.getElementById('outlook-section').hidden && document.querySelectorAll('#outlook tbody tr').length === 5`, 5*time.Second)
	ol := eval[string](b, `document.getElementById('outlook-section').textContent`)
	for _, want := range []string{"context only, not a score", "Coastal flooding", "Extreme heat", "Late century, higher warming", "×", "Orleans", "22071", "February 2025", "Hydrology"} {
		if !strings.Contains(ol, want) {
			t.Errorf("the outlook section does not say %q: %s", want, ol)
		}
	}
	if n := eval[int](b, `document.querySelectorAll('#outlook tbody tr[data-hazard] td').length`); n != 5*6 && !strings.Contains(ol, "No projections") {
		t.Errorf("the outlook table has %d cells, want a module, today and four scenarios for each of the 5 hazards", n)
	}
	if after := eval[bool](b, `!!(document.getElementById('cards').compareDocumentPosition(document.getElementById('outlook-section')) & Node.DOCUMENT_POSITION_FOLLOWING)`); !after {
		t.Error("the outlook is not after the module cards")
	}
	b.shotOf("03b-report-outlook", "#outlook-section")

	// The PDF through the page, with the key in a header.
	b.do(chromedp.Click("#download-pdf"))
	reportID := reportURL[strings.LastIndex(reportURL, "/")+1:]
	pdf := b.waitDownload("location-risk-" + reportID + ".pdf")
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Errorf("the downloaded PDF starts %q", pdf[:min(len(pdf), 8)])
	}

	// ---- a tampered report ----
	// The page's fetch of the report is answered with a score changed, by
	// DevTools' fetch domain (a hook of this test only).
	b.tamperNext(`"overallScore":`, reportID)
	b.do(chromedp.Reload())
	b.waitFor("the tampered report's signature check",
		`document.querySelectorAll('#cards section.card').length === 6 && document.getElementById('badge').dataset.state`, 30*time.Second)
	if st := eval[string](b, `document.getElementById('badge').dataset.state`); st != "failed" {
		t.Errorf("a report with a changed score: badge %q, want failed (not verified)", st)
	}
	if txt := eval[string](b, `document.getElementById('badge').textContent`); !strings.Contains(txt, "Not verified") {
		t.Errorf("the tampered report's badge reads %q", txt)
	}
	b.shot("04-report-tampered")
	b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, fetch.Disable, struct{}{})
		return err
	}))

	// ---- a portfolio ----
	csvPath := filepath.Join(t.TempDir(), "portfolio.csv")
	portfolio := "externalId,latitude,longitude\r\n" +
		"chicago,41.8781,-87.6298\r\n" +
		"miami,25.7617,-80.1918\r\n" +
		"\"denver, co\",39.7392,-104.9903\r\n" +
		"seattle,47.6062,-122.3321\r\n" +
		"not-a-number,abc,-90\r\n" +
		"gulf-of-guinea,0,0\r\n" +
		"anchorage,61.2181,-149.9003\r\n" +
		"san-juan,18.4655,-66.1057\r\n"
	if err := os.WriteFile(csvPath, []byte(portfolio), 0o644); err != nil {
		t.Fatal(err)
	}
	b.navigate(srv.base + "/console/portfolio")
	b.waitFor("the portfolio page", `document.getElementById('csv') && !document.querySelector('#batches .muted:only-child')?.textContent.startsWith('Loading')`, 15*time.Second)
	b.do(chromedp.SetUploadFiles("#csv", []string{csvPath}), chromedp.SendKeys("#batch-name", "Browser test portfolio"))
	b.shot("05-portfolio")
	b.do(chromedp.Click("#upload"))
	b.waitFor("the batch page", `location.pathname.startsWith('/console/batches/')`, 30*time.Second)
	b.waitFor("the batch to complete", `document.getElementById('progress-text').textContent.startsWith('Completed')`, 2*time.Minute)
	b.waitFor("the item table", `document.querySelectorAll('#items tbody tr').length === 8`, 10*time.Second)
	if n := eval[int](b, `document.querySelectorAll('#items tbody tr.row-error').length`); n != 2 {
		t.Errorf("%d rows with an error, want 2 (a latitude that is no number, a point at sea)", n)
	}
	if errs := eval[string](b, `document.getElementById('items').textContent`); !strings.Contains(errs, "invalid_latitude") || !strings.Contains(errs, "unsupported_location") {
		t.Errorf("the item table does not show the rows' error codes: %s", errs)
	}
	if v := eval[float64](b, `document.getElementById('progress').value`); v != 100 {
		t.Errorf("progress bar at %v, want 100", v)
	}
	b.shot("06-batch")
	batchID := strings.TrimPrefix(eval[string](b, "location.pathname"), "/console/batches/")
	b.do(chromedp.Click("#download-csv"))
	rows, err := csv.NewReader(bytes.NewReader(b.waitDownload("batch-" + batchID + ".csv"))).ReadAll()
	if err != nil {
		t.Fatalf("the downloaded CSV: %v", err)
	}
	if len(rows) != 9 || strings.Join(rows[0], ",") != "rowNumber,externalId,latitude,longitude,status,reportJobId,reportId,score,riskLevel,hydrology,severeWeather,wildfire,earthquake,landslide,environmentalExposure,errorCode,errorMessage" {
		t.Errorf("the downloaded CSV has %d rows, header %v", len(rows), rows[0])
	} else if rows[3][1] != "denver, co" || rows[3][4] != "completed" || rows[5][4] != "rejected" || rows[5][15] != "invalid_latitude" {
		t.Errorf("the downloaded CSV's rows 3 and 5: %v / %v", rows[3], rows[5])
	}

	// ---- a watchlist, made through the API, on the portfolio page ----
	made := srv.do(t, key, http.MethodPost, "/api/v1/location-risk/watchlists", map[string]any{
		"name": "Browser test watchlist",
		"items": []map[string]any{
			{"externalId": "new-orleans", "latitude": 29.9511, "longitude": -90.0715},
			{"externalId": "boise", "latitude": 43.615, "longitude": -116.2023},
		},
	})
	if made.status != http.StatusCreated {
		t.Fatalf("creating a watchlist: %d %s", made.status, made.body)
	}
	list, _ := made.object(t)["watchlist"].(map[string]any)["watchlistId"].(string)
	waitItems(t, srv, key, list, "the watchlist's first reports", 2*time.Minute, func(watchItem) bool { return true })
	b.navigate(srv.base + "/console/portfolio")
	row := `#watchlists tr[data-watchlist="` + list + `"]`
	b.waitFor("the watchlist in the list", `document.querySelector('`+row+`')`, 15*time.Second)
	if txt := eval[string](b, `document.querySelector('`+row+`').textContent`); !strings.Contains(txt, "Browser test watchlist") || !strings.Contains(txt, "2") {
		t.Errorf("the watchlist's row reads %q, want its name and its 2 items", txt)
	}
	b.do(chromedp.Click(row + ` button.show-items`))
	b.waitFor("the watchlist's items", `document.querySelectorAll('#wl-items tbody tr[data-item]').length === 2`, 15*time.Second)
	items := eval[string](b, `document.getElementById('wl-items').textContent`)
	if strings.Contains(items, "null") || strings.Contains(items, "undefined") {
		t.Errorf("the watchlist's items show a missing value as code: %s", items)
	}
	for _, want := range []string{"new-orleans", "boise", "Completed"} {
		if !strings.Contains(items, want) {
			t.Errorf("the watchlist's items do not show %q: %s", want, items)
		}
	}
	if n := eval[int](b, `document.querySelectorAll('#wl-items tbody .level:not(.lvl-none)').length`); n != 2 {
		t.Errorf("%d items show a score's level, want 2", n)
	}
	if n := eval[int](b, `document.querySelectorAll('#wl-items tbody tr[data-changed="false"]').length`); n != 2 {
		t.Errorf("%d items are shown unchanged, want both (no re-score yet)", n)
	}
	b.shotOf("06b-portfolio-watchlist", "#watchlists-section")

	// ---- operations: a webhook endpoint on a loopback receiver ----
	got := make(chan string, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case got <- r.Header.Get("Service-Event"):
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	b.navigate(srv.base + "/console/operations")
	b.waitFor("the operations page", `document.querySelector('#usage .quota') && document.querySelector('#history svg.chart') && document.querySelector('#summary .stats')`, 15*time.Second)
	b.do(chromedp.Click("#add-endpoint summary"),
		chromedp.SendKeys("#ep-name", "Loopback receiver", chromedp.NodeVisible),
		chromedp.SendKeys("#ep-url", receiver.URL+"/hook"),
		chromedp.Click("#endpoint-form button[type=submit]"))
	b.waitFor("the new endpoint's secret", `document.querySelector('#endpoint-status .secret-value')`, 10*time.Second)
	if s := eval[string](b, `document.querySelector('#endpoint-status .secret-value').textContent`); !strings.HasPrefix(s, "whsec_") {
		t.Errorf("the signing secret shown is %q", s)
	}
	b.waitFor("the endpoint in the list", `document.querySelector('#endpoints button.send-test')`, 10*time.Second)
	b.do(chromedp.Click("#endpoints button.send-test"))
	select {
	case ev := <-got:
		if ev != "webhook.test" {
			t.Errorf("the receiver got %q, want webhook.test", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the loopback receiver got no test event within 30 s")
	}
	b.waitFor("the test delivery in the log", `document.querySelector('#deliveries tr[data-event="webhook.test"][data-status="succeeded"]')`, 15*time.Second)
	b.shot("07-operations")

	// ---- 360 pixels wide ----
	for _, p := range []struct{ name, path, ready string }{
		{"08-narrow-address", "/console/", `document.querySelectorAll('#usmap path.state').length > 0 && document.querySelector('#recent table')`},
		{"09-narrow-report", strings.TrimPrefix(reportURL, srv.base), `document.getElementById('badge').dataset.state && document.querySelectorAll('#sitemaps svg').length === 2`},
		{"10-narrow-batch", "/console/batches/" + batchID, `document.querySelectorAll('#items tbody tr').length === 8`},
		{"11-narrow-operations", "/console/operations", `document.querySelector('#deliveries table') && document.querySelector('#summary .stats')`},
		{"11-narrow-portfolio", "/console/portfolio", `document.querySelector('#batches table') && document.querySelector('#watchlists table')`},
	} {
		b.viewport(360, 780)
		b.navigate(srv.base + p.path)
		b.waitFor(p.name, p.ready, 20*time.Second)
		if w := eval[int](b, `document.documentElement.scrollWidth`); w > 360 {
			t.Errorf("%s at 360 px: the page is %d px wide, so it scrolls sideways; beyond the edge: %s", p.path, w, eval[string](b, overflowing))
		}
		b.shot(p.name)
		switch p.name {
		case "09-narrow-report":
			b.shotOf("09b-narrow-report-outlook", "#outlook-section")
		case "11-narrow-portfolio":
			b.do(chromedp.Click(`#watchlists button.show-items`))
			b.waitFor("the watchlist's items at 360 px", `document.querySelectorAll('#wl-items tbody tr[data-item]').length === 2`, 15*time.Second)
			if w := eval[int](b, `document.documentElement.scrollWidth`); w > 360 {
				t.Errorf("the watchlist's items at 360 px: the page is %d px wide; beyond the edge: %s", w, eval[string](b, overflowing))
			}
			b.shotOf("11b-narrow-watchlist", "#watchlists-section")
		}
	}
	b.viewport(1280, 900)

	// ---- a key with fewer scopes ----
	// Its refusals are meant: the browser notes each 403 in the console.
	expected := len(b.problems())
	env := map[string]string{"LOCRISK_DB": db}
	reader := mustCLI(t, env, "keys", "create", "--account", account, "--scopes", "reports:read")
	b.navigate(srv.base + "/console/operations")
	b.do(chromedp.Click("#signout", chromedp.NodeVisible))
	b.waitFor("the sign-in page after signing out", `location.pathname === '/console/signin'`, 10*time.Second)
	if k := eval[string](b, `String(sessionStorage.getItem('locrisk.apiKey'))`); k != "null" {
		t.Errorf("after signing out sessionStorage still holds a key")
	}
	b.viewport(360, 780)
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 360 {
		t.Errorf("the sign-in page at 360 px is %d px wide", w)
	}
	b.shot("12-narrow-signin")
	b.viewport(1280, 900)
	b.do(chromedp.SendKeys("#key", reader, chromedp.NodeVisible), chromedp.Click("#signin-submit"))
	b.waitFor("the address page", `location.pathname === '/console/'`, 15*time.Second)
	b.navigate(srv.base + "/console/operations")
	b.waitFor("the scope notes", `document.querySelectorAll('.scope-note').length >= 3`, 15*time.Second)
	if txt := eval[string](b, `document.querySelector('#usage').textContent`); !strings.Contains(txt, "usage:read") {
		t.Errorf("usage without usage:read: %q, want a note naming the scope", txt)
	}
	b.shot("13-operations-reports-read-only")
	b.navigate(srv.base + "/console/portfolio")
	b.waitFor("the watchlists' scope note", `document.querySelector('#watchlists .scope-note')`, 15*time.Second)
	if txt := eval[string](b, `document.getElementById('watchlists').textContent`); !strings.Contains(txt, "watchlists:read") {
		t.Errorf("watchlists without watchlists:read: %q, want a note naming the scope", txt)
	}
	if !eval[bool](b, `document.getElementById('add-watchlist').hidden`) {
		t.Error("the form that creates a watchlist shows for a key without watchlists:read")
	}
	b.shotOf("13b-portfolio-watchlists-without-scope", "#watchlists-section")
	b.navigate(srv.base + "/console/")
	b.waitFor("the address page", `document.getElementById('lat')`, 10*time.Second)
	b.do(chromedp.SendKeys("#lat", "41.8781"), chromedp.SendKeys("#lon", "-87.6298"), chromedp.Click("#create"))
	b.waitFor("the note on the missing scope", `document.querySelector('#job-status .scope-note')`, 15*time.Second)
	if txt := eval[string](b, `document.querySelector('#job-status').textContent`); !strings.Contains(txt, "reports:create") {
		t.Errorf("creating a report without reports:create: %q", txt)
	}
	b.shot("14-address-without-reports-create")

	// ---- throughout ----
	var problems []string
	for i, p := range b.problems() {
		if i >= expected && strings.Contains(p, "status of 403 (Forbidden)") {
			continue
		}
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		t.Errorf("the pages wrote %d errors or warnings to the console:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	b.mu.Lock()
	requests := append([]string(nil), b.requests...)
	b.mu.Unlock()
	for _, u := range requests {
		if !strings.HasPrefix(u, srv.base+"/") && !strings.HasPrefix(u, "blob:"+srv.base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the browser requested %s, outside the server's origin", u)
		}
		for _, k := range []string{key, reader} {
			if strings.Contains(u, k) {
				t.Errorf("a request's address holds the key: %s", u)
			}
		}
	}
	for _, line := range srv.log.Lines() {
		if strings.Contains(line, key) || strings.Contains(line, reader) {
			t.Errorf("the server's log holds a key: %s", line)
		}
	}
}

// overflowing names the elements that reach past the viewport's right
// edge, for the message of a page too wide.
const overflowing = `Array.from(document.querySelectorAll('body *')).filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5)
	.slice(0, 8).map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && e.className.baseVal === undefined ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')`

// tamperNext answers the page's next fetch of report id's full JSON
// with the bytes the server sent, except that the first number after
// field is one more: the signature no longer matches.
func (b *browserSession) tamperNext(field, id string) {
	b.t.Helper()
	paused := chromedp.Events(b.ctx, fetch.RequestPaused)
	b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
			{URLPattern: "*/api/v1/location-risk/reports/" + id + "?detail=full", RequestStage: fetch.RequestStageResponse},
		}})
		return err
	}))
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
			body, err := chromedp.Call(ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: ev.RequestID})
			if err != nil {
				b.t.Errorf("tamper: read the body: %v", err)
				cancel()
				return
			}
			changed := bumpNumberAfter(body.Body, field)
			if bytes.Equal(changed, body.Body) {
				b.t.Errorf("tamper: no %s in the report", field)
			}
			var headers []*fetch.HeaderEntry
			for _, h := range ev.ResponseHeaders {
				if !strings.EqualFold(h.Name, "Content-Length") {
					headers = append(headers, h)
				}
			}
			if _, err := chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
				RequestID: ev.RequestID, ResponseCode: ev.ResponseStatusCode, ResponseHeaders: headers, Body: changed,
			}); err != nil {
				b.t.Errorf("tamper: answer: %v", err)
			}
			cancel()
			return // one request only
		}
	}()
}

// bumpNumberAfter adds one to the integer that follows the first
// occurrence of field in body.
func bumpNumberAfter(body []byte, field string) []byte {
	i := bytes.Index(body, []byte(field))
	if i < 0 {
		return body
	}
	j := i + len(field)
	k := j
	for k < len(body) && body[k] >= '0' && body[k] <= '9' {
		k++
	}
	var n int
	if _, err := fmt.Sscan(string(body[j:k]), &n); err != nil {
		return body
	}
	out := append([]byte(nil), body[:j]...)
	out = append(out, []byte(fmt.Sprint((n+1)%101))...)
	return append(out, body[k:]...)
}

// waitDownload waits for the browser to have saved name in the downloads
// directory and returns its bytes.
func (b *browserSession) waitDownload(name string) []byte {
	b.t.Helper()
	path := filepath.Join(b.downloads, name)
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && len(data) > 0 {
			if _, err := os.Stat(path + ".crdownload"); errors.Is(err, os.ErrNotExist) {
				return data
			}
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(b.downloads)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			b.t.Fatalf("no download %s within 30 s (the directory holds %v)", name, names)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
