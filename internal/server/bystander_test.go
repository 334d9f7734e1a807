package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestBystanderBesideHostileBodies (LOCRISK_LOAD=1, over loopback): 200
// clients of eight accounts post 1 MiB bodies of 90,000 keys as fast as
// they are answered, while another account reads its job list. The
// reader's p99 must stay within a second (it was 1.1 s before large
// bodies took turns, bodyTurns), so that one account's hostile bodies do
// not stall everyone else's requests. Run it with
//
//	LOCRISK_LOAD=1 go test -count=1 -run TestBystanderBesideHostileBodies -v ./internal/server
func TestBystanderBesideHostileBodies(t *testing.T) {
	if os.Getenv("LOCRISK_LOAD") != "1" {
		t.Skip("need LOCRISK_LOAD=1: a load test")
	}
	const (
		clients  = 200
		accounts = 8
		duration = 10 * time.Second
	)
	e := newEnv(t)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	body := manyKeysBody()
	var keys []string
	for range accounts {
		keys = append(keys, e.allScopesKey(e.account(1<<30, 1<<30)))
	}
	reader := e.allScopesKey(e.account(10, 1<<30))
	tr := &http.Transport{MaxIdleConnsPerHost: clients + 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+jobsPath, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+keys[i%accounts])
				res, err := client.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				statuses[res.StatusCode]++
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Second) // the flood builds up
	var reads []time.Duration
	for ctx.Err() == nil {
		req, _ := http.NewRequest("GET", srv.URL+jobsPath+"?limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+reader)
		began := time.Now()
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("read beside the flood: %v", err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		reads = append(reads, time.Since(began))
		if res.StatusCode != http.StatusOK {
			t.Errorf("read beside the flood: %d", res.StatusCode)
		}
	}
	cancel()
	wg.Wait()
	slices.Sort(reads)
	pct := func(p int) time.Duration { return reads[min(len(reads)-1, len(reads)*p/100)].Round(time.Millisecond) }
	t.Logf("%d clients, %d accounts, %s: hostile POSTs answered %v; %d reads beside them: p50 %v, p99 %v, max %v",
		clients, accounts, duration, fmt.Sprint(statuses), len(reads), pct(50), pct(99), reads[len(reads)-1].Round(time.Millisecond))
	if pct(99) > time.Second {
		t.Errorf("reads beside the flood: p99 %v, want at most 1s", pct(99))
	}
}
