package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelpExamplesRun runs every example of every command's -h, of the
// top-level help and the `locrisk report ...` and `locrisk data ...` lines
// of the documentation (README.md and docs/*.md) as written, with the
// fixture data standing in for ../shared/data and real ids for acct_...
// and key_..., in a fresh directory (so ./locrisk.db is new). serve and data validate cannot run here (a
// listener; the validation table needs the real data): their examples are
// parsed only, which checks every flag and environment variable they name.
func TestHelpExamplesRun(t *testing.T) {
	fixture, err := filepath.Abs(fixtureData)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = string(b)
	}
	t.Chdir(t.TempDir())
	// The file the score examples read.
	if err := os.WriteFile("portfolio.csv", []byte("externalId,latitude,longitude\nP-1,41.8781,-87.6298\nP-2,91,0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The file the data replace examples put in a pack: a Superfund list.
	npl, err := os.ReadFile(filepath.Join(fixture, "environmental", "epa_superfund_npl_sites_2022-09.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("superfund-2026-10.csv", npl, 0o600); err != nil {
		t.Fatal(err)
	}

	var lines []string
	top := cmd(t, nil, "-h")
	lines = append(lines, exampleLines(t, top.stdout, "Quick start:")...)
	// required: each command's flags that its help marks "(required)".
	required := map[string][]string{}
	requiredRE := regexp.MustCompile(`(?m)^  --([a-z0-9-]+).*\n.*\(required\)`)
	for _, k := range commands() {
		h := cmd(t, nil, append(strings.Fields(k.path), "-h")...)
		if h.code != exitOK {
			t.Fatalf("%s -h: exit %d", k.path, h.code)
		}
		for _, m := range requiredRE.FindAllStringSubmatch(h.stdout, -1) {
			required[k.path] = append(required[k.path], m[1])
		}
		ex := exampleLines(t, h.stdout, "Examples:")
		if len(ex) == 0 {
			t.Errorf("%s -h has no examples", k.path)
		}
		lines = append(lines, ex...)
	}
	if len(required["report"]) == 0 || len(required["score"]) < 2 {
		t.Fatalf("required flags not found in the help texts: %v", required)
	}
	fromDocs := map[string]int{} // per command, the invocations found in the documentation
	for _, text := range docs {
		for _, m := range regexp.MustCompile("`(locrisk (?:report|data) [^`]*)`").FindAllStringSubmatch(text, -1) {
			// An invocation with flags or arguments, not a synopsis ([--flag])
			// nor the bare name of a command in a sentence.
			if len(strings.Fields(m[1])) > 3 && !strings.ContainsAny(m[1], "[]|") {
				lines = append(lines, m[1])
				fromDocs[strings.Fields(m[1])[1]]++
			}
		}
	}
	if fromDocs["report"] == 0 || fromDocs["data"] == 0 {
		t.Fatalf("found %v locrisk report and data invocations in the documentation, want some of each", fromDocs)
	}

	acct := strings.TrimSpace(cmd(t, nil, "accounts", "create", "--name", "Examples").stdout)
	cmd(t, nil, "keys", "create", "--account", acct, "--scopes", "reports:read")
	key := regexp.MustCompile(`key_[A-Za-z0-9]+`).FindString(cmd(t, nil, "keys", "list").stdout)
	if !strings.HasPrefix(acct, "acct_") || key == "" {
		t.Fatalf("setup: account %q key %q", acct, key)
	}
	subst := regexp.MustCompile(`^[A-Z_]+=\$\((.*)\)$`) // NAME=$(command): run the command
	for _, line := range lines {
		line = subst.ReplaceAllString(line, "$1")
		line = strings.NewReplacer("acct_...", acct, "key_...", key, "--data-dir ./pack", "--data-dir "+fixture, "testdata/data", fixture).Replace(line)
		env, args, in, out := shellWords(t, line)
		// The examples run on the fixture pack, not the built-in data, whose
		// reference takes seconds to build for each one.
		if _, ok := env["LOCRISK_DATA_DIR"]; !ok {
			env["LOCRISK_DATA_DIR"] = fixture
		}
		// data diff compares with the fixture pack too, not the built-in.
		if _, ok := env["LOCRISK_FROM"]; !ok {
			env["LOCRISK_FROM"] = fixture
		}
		if len(args) == 0 || args[0] != "locrisk" {
			t.Errorf("example %q does not start with locrisk", line)
			continue
		}
		args = args[1:]
		// A command that is only parsed must still be given what it
		// requires, on its command line or in the environment.
		// The command is the longest path that starts the arguments, as
		// run picks it ("report verify", not "report").
		var path string
		for _, k := range commands() {
			if w := strings.Fields(k.path); slices.Equal(args[:min(len(args), len(w))], w) && len(w) > len(strings.Fields(path)) {
				path = k.path
			}
		}
		{
			for _, fl := range required[path] {
				if _, inEnv := env[envName(fl)]; !inEnv && !slices.Contains(args, "--"+fl) {
					t.Errorf("example %q lacks the required --%s", line, fl)
				}
			}
		}
		c := &cli{ctx: context.Background(), env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, stdin: strings.NewReader("")}
		if in != "" {
			f, err := os.Open(in)
			if err != nil {
				t.Fatalf("example %q: %v", line, err)
			}
			defer f.Close()
			c.stdin = f
		}
		var stdout, stderr bytes.Buffer
		c.stdout, c.stderr = &stdout, &stderr
		c.parseOnly = args[0] == "serve" || (len(args) > 1 && args[0] == "data" && (args[1] == "validate" || args[1] == "fetch"))
		if code := c.run(args); code != exitOK {
			t.Errorf("example %q: exit %d\n%s", line, code, stderr.String())
			continue
		}
		if out != "" {
			if err := os.WriteFile(out, stdout.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	// What the examples said they write is there.
	for _, f := range []string{"summary.json", "chicago.pdf", "scored.csv", "changed.csv"} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written by its example (%v)", f, err)
		}
	}
}

// exampleLines are the lines after heading in a help text, up to a blank
// line, with comments removed.
func exampleLines(t *testing.T, help, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(help, heading+"\n")
	if !ok {
		return nil
	}
	var out []string
	for l := range strings.Lines(rest) {
		l = strings.TrimSpace(l)
		if l == "" {
			break
		}
		out = append(out, l)
	}
	return out
}

// shellWords splits an example line as sh would for the forms the
// examples use: leading NAME=value assignments, single and double quotes,
// a "# comment", one "< file" and one "> file" redirection.
func shellWords(t *testing.T, line string) (env map[string]string, args []string, in, out string) {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == '#' && !inWord:
			goto done
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
done:
	if inWord {
		words = append(words, cur.String())
	}
	env = map[string]string{}
	for len(words) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[0]) {
		k, v, _ := strings.Cut(words[0], "=")
		env[k] = v
		words = words[1:]
	}
	for _, redirect := range []struct {
		op   string
		file *string
	}{{"<", &in}, {">", &out}} {
		for i := 0; i < len(words)-1; i++ {
			if words[i] == redirect.op {
				*redirect.file = words[i+1]
				words = append(words[:i], words[i+2:]...)
				break
			}
		}
	}
	return env, words, in, out
}
