package pgstore

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestReferenceBuiltOnce: nodes that start together on a fresh database
// build the engine's reference once, not once each (a build is minutes of
// CPU and a copy of the reference per node in the table). The first to find none
// builds (LoadReference answers nil); another waits for it and reads what
// it saved instead of building; a builder that goes away lets the next
// node build.
func TestReferenceBuiltOnce(t *testing.T) {
	ctx := context.Background()
	a := openFresh(t, serverDSN(t), Options{})
	b, err := Open(ctx, a.dsn, Options{Secrets: testSecrets(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	const key = "ref-test"
	if body, err := a.LoadReference(ctx, key); err != nil || body != nil {
		t.Fatalf("first node: %d bytes, %v; want to build", len(body), err)
	}
	got := make(chan []byte, 1)
	go func() {
		body, err := b.LoadReference(ctx, key)
		if err != nil {
			t.Errorf("second node: %v", err)
		}
		got <- body
	}()
	select {
	case body := <-got:
		t.Fatalf("the second node did not wait for the first: %d bytes", len(body))
	case <-time.After(300 * time.Millisecond):
	}
	want := bytes.Repeat([]byte("reference "), 1000)
	if err := a.SaveReference(ctx, key, want); err != nil {
		t.Fatal(err)
	}
	select {
	case body := <-got:
		if !bytes.Equal(body, want) {
			t.Fatalf("the second node read %d bytes, want the first node's %d", len(body), len(want))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second node still waits after the first saved")
	}

	// A builder that goes away (its store closed, as a process that dies
	// loses its connection) lets the next node build.
	c, err := Open(ctx, a.dsn, Options{Secrets: testSecrets(t)})
	if err != nil {
		t.Fatal(err)
	}
	if body, err := c.LoadReference(ctx, "other-key"); err != nil || body != nil {
		t.Fatalf("builder of another key: %d bytes, %v", len(body), err)
	}
	c.Close()
	done := make(chan error, 1)
	go func() {
		body, err := b.LoadReference(ctx, "other-key")
		if err == nil && body != nil {
			t.Errorf("read %d bytes of a reference nobody saved", len(body))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a node still waits for a builder that went away")
	}
}
