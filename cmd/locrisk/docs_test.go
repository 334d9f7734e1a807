package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/internal/server"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// apiExamples is the file whose curl examples ("# 1. ...") show every API
// operation; README.md sends newcomers there.
const apiExamples = "../../docs/api-examples.md"

// TestAPIExamplesNumbered: the API examples ("# 1. ...") of
// docs/api-examples.md are numbered as docs/api.md numbers the
// operations, each operation once. They are grouped by topic (a batch
// listing, 18, sits with the batches), so the numbers rise within each
// example block and together are 1 to the last operation with none
// missing.
func TestAPIExamplesNumbered(t *testing.T) {
	b, err := os.ReadFile(apiExamples)
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for _, block := range regexp.MustCompile("(?s)```sh\n.*?```").FindAllString(string(b), -1) {
		prev := 0
		for _, m := range regexp.MustCompile(`(?m)^# (\d+)\. `).FindAllStringSubmatch(block, -1) {
			n, _ := strconv.Atoi(m[1])
			if n <= prev {
				t.Errorf("%s: example %d follows example %d in one block", apiExamples, n, prev)
			}
			prev = n
			all = append(all, n)
		}
	}
	slices.Sort(all)
	for i, n := range all {
		if n != i+1 {
			t.Fatalf("%s: examples are numbered %v, want 1 to %d each once", apiExamples, all, len(all))
		}
	}
	if len(all) < 20 {
		t.Errorf("%s numbers %d examples, want the 20 operations at least", apiExamples, len(all))
	}
}

// docFiles are the documentation files the tests read: README.md and
// every docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/*.md: %v %v", files, err)
	}
	return append([]string{"../../README.md"}, files...)
}

// TestCurlExamplesSendJSON: every curl example of the documentation (the
// sh blocks of README.md and docs/*.md, and scripts/demo) that sends a
// body with -d also sends Content-Type: application/json. curl -d alone
// sends a form, which the API refuses with 415 unsupported_media_type
// (docs/api.md, Errors).
func TestCurlExamplesSendJSON(t *testing.T) {
	texts := map[string][]string{}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
			texts[f] = append(texts[f], m[1])
		}
	}
	demo, err := os.ReadFile("../../scripts/demo")
	if err != nil {
		t.Fatal(err)
	}
	texts["scripts/demo"] = []string{string(demo)}
	// A command runs from a line that starts with curl to the next curl,
	// comment or blank line: its continuation lines and a -d body that
	// spans lines.
	start := regexp.MustCompile(`^\s*curl\s`)
	sends := regexp.MustCompile(`\s(-d|--data|--data-raw|--data-binary)\s`)
	n := 0
	for f, blocks := range texts {
		for _, block := range blocks {
			var cmds []string
			for l := range strings.Lines(block) {
				trimmed := strings.TrimSpace(l)
				switch {
				case start.MatchString(l):
					cmds = append(cmds, l)
				case trimmed == "" || strings.HasPrefix(trimmed, "#"):
					cmds = append(cmds, "")
				case len(cmds) > 0 && cmds[len(cmds)-1] != "":
					cmds[len(cmds)-1] += l
				}
			}
			for _, c := range cmds {
				if !sends.MatchString(c) {
					continue
				}
				n++
				if !strings.Contains(c, "Content-Type: application/json") {
					t.Errorf("%s: curl sends a body without -H 'Content-Type: application/json':\n%s", f, c)
				}
			}
		}
	}
	if n < 5 {
		t.Errorf("found %d curl examples that send a body, want the report job, batch and webhook ones at least", n)
	}
}

// TestReadmeCommands: the README gives the run command and the test
// command, and .ci/run runs that test command (uncached).
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"scripts/demo", "scripts/test"} {
		if !strings.Contains(string(readme), "```sh\n"+c+"\n```") {
			t.Errorf("README.md has no sh block holding just %q", c)
		}
		if fi, err := os.Stat("../../" + c); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not an executable file (%v)", c, err)
		}
	}
	if !regexp.MustCompile(`(?m)^scripts/test -count=1 \./\.\.\.$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command as scripts/test -count=1 ./...")
	}
}

// TestDocLinks: every relative link of the documentation names a file
// that exists and, into a Markdown file, a heading or anchor it has.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(b), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: %v", doc, target, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[frag] {
				t.Errorf("%s: link %s: %s has no such heading or anchor", doc, target, path)
			}
		}
	}
}

// headingAnchors are the anchors a Markdown file offers: GitHub's ids of
// its headings and its <a id="..."> tags.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)">`).FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	md = regexp.MustCompile("(?ms)^```.*?^```").ReplaceAllString(md, "")
	seen := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#{1,6} (.+)$`).FindAllStringSubmatch(md, -1) {
		h := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(m[1], "$1") // a link counts as its text
		h = strings.ToLower(h)
		var id strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				id.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
				id.WriteRune(r)
			}
		}
		s := id.String()
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestVerificationOpenSSLRecipe runs the openssl recipe of
// docs/verification.md (Verify with openssl alone) as written, in a
// fresh directory, on a PDF that `locrisk report --pdf` made, with HOST
// a server on the same database: the recipe fetches the published keys,
// cuts the signing key's PEM out of them, and openssl verifies.
func TestVerificationOpenSSLRecipe(t *testing.T) {
	for _, tool := range []string{"sh", "sed", "base64", "curl", "openssl", "pdfdetach", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("need " + tool)
		}
	}
	b, err := os.ReadFile("../../docs/verification.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "## Verify with openssl alone")
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if m == nil || !strings.Contains(m[1], "http://HOST/") || !strings.Contains(m[1], "key.pem") {
		t.Fatalf("docs/verification.md: no sh block that fetches http://HOST/... and writes key.pem under Verify with openssl alone")
	}
	recipe := m[1]

	dir := t.TempDir()
	db := filepath.Join(dir, "audit.db")
	env := map[string]string{"LOCRISK_DB": db, "LOCRISK_DATA_DIR": fixtureData}
	acct := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Audit").stdout)
	if r := cmd(t, env, "report", "--account", acct, "--pdf", filepath.Join(dir, "report.pdf"), "41.8781", "-87.6298"); r.code != exitOK {
		t.Fatalf("report --pdf: exit %d\n%s", r.code, r.stderr)
	}
	// A second key, current now, so that the recipe must pick the key
	// the report names out of two.
	if r := cmd(t, env, "signing-keys", "rotate"); r.code != exitOK {
		t.Fatalf("signing-keys rotate: exit %d\n%s", r.code, r.stderr)
	}
	st, err := sqliteBackend{path: db}.openWith(context.Background(), nil, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	api := newSQLiteAPI(server.Config{Logger: slog.New(slog.DiscardHandler)}, st, anywhere{}, nil)
	defer api.Close(context.Background())
	ts := httptest.NewServer(api.Handler())
	defer ts.Close()

	sh := exec.Command("sh", "-c", strings.ReplaceAll(recipe, "http://HOST", ts.URL))
	sh.Dir = dir
	out, err := sh.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Signature Verified Successfully") {
		t.Fatalf("the recipe: %v\n%s", err, out)
	}
	pem, err := os.ReadFile(filepath.Join(dir, "key.pem"))
	if err != nil || strings.Count(string(pem), "-----BEGIN PUBLIC KEY-----") != 1 || !strings.HasSuffix(string(pem), "-----END PUBLIC KEY-----\n") {
		t.Errorf("key.pem = %q, %v; want one PEM public key", pem, err)
	}
}

// TestPostgresWalkthroughParses: every locrisk command of the sh blocks of
// docs/postgres.md (the two-node walkthrough) names a command and flags
// that exist, with the environment the walkthrough exports. The
// walkthrough itself needs a PostgreSQL server and two listening nodes,
// so its commands are parsed, not run.
func TestPostgresWalkthroughParses(t *testing.T) {
	b, err := os.ReadFile("../../docs/postgres.md")
	if err != nil {
		t.Fatal(err)
	}
	// A locrisk command runs to the end of its line, a redirection, a
	// closing parenthesis, a pipe or a &.
	invocation := regexp.MustCompile(`(?m)(?:^|\$\()locrisk\s+([^)&|\n]*?)\s*(?:\d?>|\)|&|\||$)`)
	seen := map[string]bool{}
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		env := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^export (LOCRISK_[A-Z_]+)=`).FindAllStringSubmatch(block[1], -1) {
			env[m[1]] = "set by the walkthrough"
		}
		env["LOCRISK_DB"] = "postgres:///postgres?host=/nonexistent"
		for _, m := range invocation.FindAllStringSubmatch(block[1], -1) {
			_, args, _, _ := shellWords(t, m[1])
			c := &cli{ctx: context.Background(), env: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				stdin: strings.NewReader(""), parseOnly: true}
			var stdout, stderr strings.Builder
			c.stdout, c.stderr = &stdout, &stderr
			if code := c.run(args); code != exitOK {
				t.Errorf("docs/postgres.md: locrisk %s: exit %d\n%s", m[1], code, stderr.String())
			}
			seen[strings.Join(args[:min(2, len(args))], " ")] = true
		}
	}
	for _, want := range []string{"db migrate", "serve --addr", "accounts create", "keys create"} {
		if !seen[want] {
			t.Errorf("docs/postgres.md: no sh block runs locrisk %s (the two-node walkthrough); found %v", want, seen)
		}
	}
}
