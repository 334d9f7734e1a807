package webhook_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"locrisk/webhook"
)

// TestOpenSSLRecipe runs the shell recipes of README.md and
// docs/webhooks.md exactly as written on a delivery signed by this package:
// a good one must print "verified", a tampered body or an old timestamp
// must not.
func TestOpenSSLRecipe(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```")
	for _, doc := range []string{"../README.md", "../docs/webhooks.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var recipe string
		for _, m := range block.FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], "openssl dgst") {
				recipe = m[1]
			}
		}
		if recipe == "" {
			t.Fatalf("%s: no sh block with openssl dgst", doc)
		}
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
