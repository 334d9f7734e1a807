package server

// Keys' last use, as `locrisk keys list` shows it (docs/operations.md, Accounts and keys).
// Writing it on every request would add a write to every read; instead a
// key's use is noted in memory at most once per keyUseGranularity, and
// the notes go to the database with the request statistics (FlushStats,
// every second by default, and at Close). So a listed last use is at most
// a minute (plus a flush) earlier than the true one, and a busy key costs
// one small UPDATE a minute.

import (
	"context"
	"time"

	"github.com/locrisk/locrisk"
)

// keyUseGranularity is how often at most a key's use is noted.
const keyUseGranularity = time.Minute

// maxKeyNotes bounds the memory of when keys were last noted; beyond it the
// notes older than keyUseGranularity are forgotten (only keys that
// authenticated are noted, so this is the number of keys in use).
const maxKeyNotes = 10000

// noteKeyUse notes that keyID authenticated a request at now, unless it was
// noted less than keyUseGranularity before.
func (r *requestRecorder) noteKeyUse(keyID string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, ok := r.keyNoted[keyID]; ok && now.Sub(last) < keyUseGranularity && !now.Before(last) {
		return
	}
	if len(r.keyNoted) >= maxKeyNotes {
		for id, t := range r.keyNoted {
			if now.Sub(t) >= keyUseGranularity {
				delete(r.keyNoted, id)
			}
		}
		if len(r.keyNoted) >= maxKeyNotes {
			clear(r.keyNoted)
		}
	}
	r.keyNoted[keyID] = now
	r.keyUses[keyID] = now
}

// flushKeyUses writes the noted uses in one transaction; on failure they
// stay in memory, unless a newer use of the same key was noted meanwhile.
// The caller holds flushMu.
func (s *Server) flushKeyUses(ctx context.Context) error {
	r := s.stats
	r.mu.Lock()
	batch := r.keyUses
	if len(batch) == 0 {
		r.mu.Unlock()
		return nil
	}
	r.keyUses = make(map[string]time.Time, len(batch))
	r.mu.Unlock()

	uses := make([]locrisk.KeyUse, 0, len(batch))
	for id, t := range batch {
		uses = append(uses, locrisk.KeyUse{KeyID: id, At: t})
	}
	err := s.store.RecordKeyUse(ctx, uses)
	if err != nil {
		r.mu.Lock()
		for id, t := range batch {
			if cur, ok := r.keyUses[id]; !ok || cur.Before(t) {
				r.keyUses[id] = t
			}
		}
		r.mu.Unlock()
	}
	return err
}
