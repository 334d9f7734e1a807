package signing

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/reportverify"
)

// memKeys keeps keys in memory and counts reads of the current one.
type memKeys struct {
	mu    sync.Mutex
	cur   *locrisk.SigningKey
	all   []locrisk.SigningKey
	reads int
}

func (m *memKeys) EnsureSigningKey(_ context.Context, k locrisk.SigningKey) (locrisk.SigningKey, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil {
		return *m.cur, false, nil
	}
	m.cur, m.all = &k, append(m.all, k)
	return k, true, nil
}

func (m *memKeys) RotateSigningKey(_ context.Context, k locrisk.SigningKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur, m.all = &k, append(m.all, k)
	return nil
}

func (m *memKeys) CurrentSigningKey(context.Context) (locrisk.SigningKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	if m.cur == nil {
		return locrisk.SigningKey{}, locrisk.ErrNotFound
	}
	return *m.cur, nil
}

func (m *memKeys) ListSigningKeys(context.Context) ([]locrisk.SigningKey, error) { return m.all, nil }

// TestSignerKeys: the first use makes a key; the key read is reused for
// Refresh, then read again, so a rotation takes effect within Refresh.
func TestSignerKeys(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	keys := &memKeys{}
	s := New(keys, func() time.Time { return now })
	ctx := context.Background()
	first, created, err := s.Key(ctx)
	if err != nil || !created {
		t.Fatalf("first key: created %v, %v", created, err)
	}
	doc, err := s.Sign(ctx, []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	set := reportverify.NewKeySet(reportverify.Key{ID: first.ID, PublicKey: first.PublicKey})
	if res, err := reportverify.Verify(doc, set); err != nil || res.KeyID != first.ID {
		t.Fatalf("verify: %+v %v", res, err)
	}
	next, _ := locrisk.NewSigningKey(now)
	keys.RotateSigningKey(ctx, next)
	reads := keys.reads
	now = now.Add(Refresh - time.Millisecond)
	if k, _, _ := s.Key(ctx); k.ID != first.ID || keys.reads != reads {
		t.Errorf("within Refresh: key %s after %d reads, want the cached %s", k.ID, keys.reads-reads, first.ID)
	}
	now = now.Add(2 * time.Millisecond)
	if k, _, _ := s.Key(ctx); k.ID != next.ID {
		t.Errorf("after Refresh: key %s, want %s", k.ID, next.ID)
	}
}
