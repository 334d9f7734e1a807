package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
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
		t.Skip("need openssl")
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

// TestReadmeReceiver runs the README's example receiver (the python3 sh
// block) on a free port, sends it a delivery as the service does (Send),
// and checks that it prints every Service-* header, the Service-Timestamp
// above all, and saves the files the shell check of docs/webhooks.md
// reads; that check, run as written on those files and the secret, then
// prints "verified".
func TestReadmeReceiver(t *testing.T) {
	for _, tool := range []string{"sh", "python3", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("need " + tool)
		}
	}
	shBlock := func(doc, marker string) string {
		t.Helper()
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
			if strings.Contains(m[1], marker) {
				return m[1]
			}
		}
		t.Fatalf("%s: no sh block with %q", doc, marker)
		return ""
	}
	receiver := shBlock("../../README.md", "http.server")
	check := shBlock("../../docs/webhooks.md", "openssl dgst")
	const listen = `("127.0.0.1", 9000)`
	if !strings.Contains(receiver, listen) || !strings.HasPrefix(receiver, "python3 -c '") {
		t.Fatalf("the README's receiver no longer starts python3 -c '...' listening on %s:\n%s", listen, receiver)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	receiver = strings.Replace(receiver, listen, fmt.Sprintf(`("127.0.0.1", %d)`, port), 1)

	dir := t.TempDir()
	var out bytes.Buffer
	var mu sync.Mutex
	// exec: the shell becomes python3, so killing the process stops the
	// receiver.
	rcv := exec.Command("sh", "-c", "exec "+receiver)
	rcv.Dir = dir
	rcv.Stdout = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	if err := rcv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rcv.Process.Kill(); _ = rcv.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/hook", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver does not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="
	body := []byte(`{"id":"evt_1","type":"webhook.test","apiVersion":"v1","data":{"endpointId":"we_1"}}`)
	now := time.Now()
	res := webhook.Send(context.Background(), &http.Client{Timeout: 10 * time.Second},
		webhook.Attempt{URL: url, Secret: secret, Event: "webhook.test", DeliveryID: "wd_1", EventID: "evt_1", Body: body}, now)
	if !res.Success {
		t.Fatalf("delivery to the README's receiver: %+v", res)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	var printed string
	for deadline := time.Now().Add(5 * time.Second); ; {
		mu.Lock()
		printed = out.String()
		mu.Unlock()
		if strings.Contains(printed, string(body)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"Service-Timestamp: " + ts, "Service-Signature: " + webhook.Sign(secret, now.Unix(), body),
		"Service-Event: webhook.test", "Service-Delivery: wd_1", string(body)} {
		if !strings.Contains(printed, want) {
			t.Errorf("the receiver printed %q, without %q", printed, want)
		}
	}
	if saved, err := os.ReadFile(filepath.Join(dir, "body.json")); err != nil || !bytes.Equal(saved, body) {
		t.Errorf("body.json = %q, %v; want the raw body", saved, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", check)
	sh.Dir = dir
	got, _ := sh.CombinedOutput()
	if !strings.Contains(string(got), "verified") || strings.Contains(string(got), "refused") {
		t.Errorf("docs/webhooks.md's check on the receiver's files: %q, want verified", got)
	}
}

// writerFunc is an io.Writer of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
