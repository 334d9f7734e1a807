package webhook_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/webhook"
)

// TestOpenSSLRecipe runs every shell recipe of the documentation (the sh
// blocks with openssl dgst in README.md and docs/*.md; docs/webhooks.md
// and docs/api-examples.md have one each) exactly as written on a
// delivery signed by this package: a good one must print "verified", a
// tampered body or an old timestamp must not.
func TestOpenSSLRecipe(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```")
	type recipe struct{ doc, script string }
	var recipes []recipe
	for _, doc := range append([]string{"../../README.md"}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "openssl dgst") {
				recipes = append(recipes, recipe{doc, m[1]})
			}
		}
	}
	for _, want := range []string{"../../docs/webhooks.md", "../../docs/api-examples.md"} {
		if !slices.ContainsFunc(recipes, func(r recipe) bool { return r.doc == want }) {
			t.Errorf("%s: no sh block with openssl dgst", want)
		}
	}
	for _, r := range recipes {
		doc, recipe := r.doc, r.script
		const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ"
		body := `{"id":"evt_1","type":"report.job.completed","apiVersion":"v1","data":{"job":{"jobId":"job_1"}}}`
		now := time.Now().Unix()
		tests := []struct {
			name     string
			ts       int64
			sig      string
			body     string
			verified bool
		}{
			{"good", now, webhook.Sign(secret, now, []byte(body)), body, true},
			{"tampered body", now, webhook.Sign(secret, now, []byte(body)), body + " ", false},
			{"wrong secret", now, webhook.Sign(secret+"x", now, []byte(body)), body, false},
			{"ten minutes old", now - 600, webhook.Sign(secret, now-600, []byte(body)), body, false},
		}
		for _, tt := range tests {
			dir := t.TempDir()
			for name, content := range map[string]string{"secret.txt": secret, "timestamp.txt": strconv.FormatInt(tt.ts, 10),
				"signature.txt": tt.sig, "body.json": tt.body} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sh", "-c", recipe)
			cmd.Dir = dir
			out, _ := cmd.CombinedOutput() // a refusal may exit non-zero
			got := strings.Contains(string(out), "verified") && !strings.Contains(string(out), "refused")
			if got != tt.verified {
				t.Errorf("%s, %s: output %q, want verified=%v", doc, tt.name, out, tt.verified)
			}
		}
	}
}
