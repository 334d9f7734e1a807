package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

// holdWriter starts a write transaction that keeps the write slot until
// the returned function is called, so that the writes made meanwhile
// queue and then commit as one group.
func holdWriter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	held, free, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.WithTx(context.Background(), func(context.Context, *sqlx.Tx) error { close(held); <-free; return nil })
	}()
	<-held
	return func() {
		close(free)
		if err := <-done; err != nil {
			t.Errorf("holding writer: %v", err)
		}
	}
}

// waitQueued waits until n write functions are queued for the next group.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.group.mu.Lock()
		got := len(s.group.pending)
		s.group.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued after 10 s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// groupSizes returns the sizes of the groups committed so far.
func (o *recordingObserver) groupSizes() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.groups)
}

// TestGroupCommitOutcomesAreTheirOwn: writes queued together commit as
// one group, and each gets its own outcome. A function that fails after
// writing is rolled back to its savepoint alone; one that fails before
// writing keeps its sentinel error; the others commit.
func TestGroupCommitOutcomesAreTheirOwn(t *testing.T) {
	obs := &recordingObserver{}
	s := newStore(t, Options{Observer: obs})
	ctx := context.Background()
	insert := func(tx *sqlx.Tx, id string) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
			VALUES (?, 'group', 1, 1, ?)`, id, FormatTime(t0))
		return err
	}
	errTheirs := errors.New("refused after writing")
	fns := []struct {
		id      string
		fn      func(ctx context.Context, tx *sqlx.Tx) error
		wantErr error
		kept    bool
	}{
		{"acct_g1", func(ctx context.Context, tx *sqlx.Tx) error { return insert(tx, "acct_g1") }, nil, true},
		{"acct_g2", func(ctx context.Context, tx *sqlx.Tx) error {
			if err := insert(tx, "acct_g2"); err != nil {
				return err
			}
			return errTheirs
		}, errTheirs, false},
		{"acct_g3", func(context.Context, *sqlx.Tx) error { return locrisk.ErrLeaseLost }, locrisk.ErrLeaseLost, false},
		// The same id as the first: a constraint error, its own.
		{"acct_g1", func(ctx context.Context, tx *sqlx.Tx) error { return insert(tx, "acct_g1") }, errAny, true},
		{"acct_g5", func(ctx context.Context, tx *sqlx.Tx) error { return insert(tx, "acct_g5") }, nil, true},
	}
	release := holdWriter(t, s)
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.WithTx(ctx, f.fn) }()
		waitQueued(t, s, i+1) // queue in order
	}
	release()
	wg.Wait()
	for i, f := range fns {
		switch {
		case f.wantErr == nil && errs[i] != nil:
			t.Errorf("write %d: %v, want success", i, errs[i])
		case f.wantErr == errAny && errs[i] == nil:
			t.Errorf("write %d (duplicate id) succeeded", i)
		case f.wantErr != nil && f.wantErr != errAny && !errors.Is(errs[i], f.wantErr):
			t.Errorf("write %d: %v, want %v", i, errs[i], f.wantErr)
		}
		if got := countRows(t, s, `SELECT COUNT(*) FROM accounts WHERE id = ?`, f.id); (got == 1) != f.kept {
			t.Errorf("write %d: %d rows of %s, kept = %v", i, got, f.id, f.kept)
		}
	}
	if sizes := obs.groupSizes(); !slices.Contains(sizes, len(fns)) {
		t.Errorf("group sizes %v: want one group of all %d writes", sizes, len(fns))
	}
}

// errAny stands for "some error" in TestGroupCommitOutcomesAreTheirOwn.
var errAny = errors.New("any error")

// TestGroupCommitQuotaAndIdempotency: the quota and idempotency
// invariants hold inside one group too, where many creations share a
// transaction. 50 creates against a remaining quota of 20 give exactly 20 jobs
// and 30 quota refusals; 20 creates with one idempotency key give one job
// and 19 replays of it, and a different request under that key a
// conflict, all in the same group.
func TestGroupCommitQuotaAndIdempotency(t *testing.T) {
	obs := &recordingObserver{}
	s := newStore(t, Options{Observer: obs})
	ctx := context.Background()
	quota := newAccount(t, s, 25)
	for range 5 {
		if _, _, err := s.CreateJob(ctx, apiJob(quota.ID), t0); err != nil {
			t.Fatal(err)
		}
	}
	keyed := newAccount(t, s, 100)

	type result struct {
		job      locrisk.Job
		replayed bool
		err      error
	}
	const creates, sameKey = 50, 20
	results := make([]result, creates+sameKey+1)
	release := holdWriter(t, s)
	var wg sync.WaitGroup
	for i := range results {
		nj := apiJob(quota.ID)
		if i >= creates {
			nj = apiJob(keyed.ID)
			nj.IdempotencyKey, nj.RequestHash = "one-key", "one-hash"
			if i == len(results)-1 {
				nj.RequestHash = "another-hash"
			}
		}
		if i == len(results)-1 {
			// The different request comes after the 20 with the key.
			waitQueued(t, s, i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			job, replayed, err := s.CreateJob(ctx, nj, t0)
			results[i] = result{job, replayed, err}
		}()
	}
	waitQueued(t, s, len(results))
	release()
	wg.Wait()

	created, refused := 0, 0
	for _, r := range results[:creates] {
		switch {
		case r.err == nil:
			created++
		case errors.Is(r.err, locrisk.ErrQuotaExceeded):
			refused++
		default:
			t.Errorf("create: %v", r.err)
		}
	}
	if created != 20 || refused != 30 {
		t.Errorf("50 creates against 20 remaining: %d created, %d refused; want 20 and 30", created, refused)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs WHERE account_id = ?`, quota.ID); n != 25 {
		t.Errorf("%d jobs stored for the quota account, want 25", n)
	}
	if n := countRows(t, s, `SELECT report_jobs FROM quota_usage WHERE account_id = ?`, quota.ID); n != 25 {
		t.Errorf("quota counter %d, want 25", n)
	}

	ids, fresh := map[string]bool{}, 0
	for _, r := range results[creates : creates+sameKey] {
		if r.err != nil {
			t.Errorf("create with the key: %v", r.err)
			continue
		}
		ids[r.job.ID] = true
		if !r.replayed {
			fresh++
		}
	}
	if len(ids) != 1 || fresh != 1 {
		t.Errorf("%d creates with one key: job ids %v, %d fresh; want one job, one fresh", sameKey, ids, fresh)
	}
	if err := results[len(results)-1].err; !errors.Is(err, locrisk.ErrIdempotencyConflict) {
		t.Errorf("another request under the key: %v, want ErrIdempotencyConflict", err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs WHERE account_id = ?`, keyed.ID); n != 1 {
		t.Errorf("%d jobs stored under the key, want 1", n)
	}
	if sizes := obs.groupSizes(); !slices.Contains(sizes, len(results)) {
		t.Errorf("group sizes %v: want one group of all %d creates", sizes, len(results))
	}
}

// TestGroupCommitFailsAsAWhole: when the shared commit fails, no write of
// the group is kept and every one of them gets the error, not a success.
// A deferred foreign key violation is what makes COMMIT itself fail.
func TestGroupCommitFailsAsAWhole(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	release := holdWriter(t, s)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
				if i == 1 {
					if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, secret_hash, secret_hint, scopes, created_utc)
						VALUES ('key_orphan', 'acct_missing', 'h', 'lrk_x', 'reports:read', ?)`, FormatTime(t0))
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
					VALUES (?, 'whole', 1, 1, ?)`, fmt.Sprint("acct_w", i), FormatTime(t0))
				return err
			})
		}()
		waitQueued(t, s, i+1)
	}
	release()
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Errorf("write %d succeeded though the commit failed", i)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM accounts WHERE name = 'whole'`); n != 0 {
		t.Errorf("%d rows of a failed group kept", n)
	}
	// The store goes on: the next write commits.
	if _, err := s.CreateAccount(ctx, "after", 1, 1); err != nil {
		t.Errorf("write after a failed group: %v", err)
	}
}

// TestGroupCommitCallerGivesUp: a caller whose context ends while it waits
// for a group leaves the queue and its function never runs; on a view with
// a queue wait, waiting past it is ErrWriteQueue. The writes queued beside
// them commit.
func TestGroupCommitCallerGivesUp(t *testing.T) {
	s := newStore(t, Options{})
	release := holdWriter(t, s)
	var ran sync.Map
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 3)
	write := func(name string, s *Store, ctx context.Context) {
		errs <- s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			ran.Store(name, true)
			_, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
				VALUES (?, 'give-up', 1, 1, ?)`, "acct_"+name, FormatTime(t0))
			return err
		})
	}
	go write("cancelled", s, ctx)
	waitQueued(t, s, 1)
	go write("impatient", s.WithBusyWait(5*time.Millisecond).WithQueueWait(20*time.Millisecond), context.Background())
	waitQueued(t, s, 2)
	go write("patient", s, context.Background())
	waitQueued(t, s, 3)
	cancel()
	var got []error
	for range 2 {
		got = append(got, <-errs)
	}
	release()
	got = append(got, <-errs)
	var canceled, queue, ok int
	for _, err := range got {
		switch {
		case errors.Is(err, context.Canceled):
			canceled++
		case errors.Is(err, locrisk.ErrWriteQueue):
			queue++
		case err == nil:
			ok++
		default:
			t.Errorf("unexpected %v", err)
		}
	}
	if canceled != 1 || queue != 1 || ok != 1 {
		t.Errorf("outcomes %v: want one cancelled, one ErrWriteQueue, one success", got)
	}
	for _, name := range []string{"cancelled", "impatient"} {
		if _, ok := ran.Load(name); ok {
			t.Errorf("the %s caller's function ran", name)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM accounts WHERE name = 'give-up'`); n != 1 {
		t.Errorf("%d rows, want only the patient caller's", n)
	}
}

// TestGroupCommitPanicStaysWithItsCaller: a write function that panics
// panics in its caller's goroutine, as it would have on its own, while the
// other writes of its group commit and the store goes on.
func TestGroupCommitPanicStaysWithItsCaller(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	release := holdWriter(t, s)
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }()
		_ = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
				VALUES ('acct_panic', 'p', 1, 1, ?)`, FormatTime(t0)); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	waitQueued(t, s, 1)
	other := make(chan error, 1)
	go func() { _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); other <- err }()
	waitQueued(t, s, 2)
	release()
	if p := <-recovered; p != "boom" {
		t.Errorf("the panicking caller recovered %v, want boom", p)
	}
	if err := <-other; err != nil {
		t.Errorf("the write beside it: %v", err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM accounts WHERE id = 'acct_panic'`); n != 0 {
		t.Error("the panicking function's write was kept")
	}
	if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
		t.Errorf("write after the panic: %v", err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); n != 2 {
		t.Errorf("%d jobs, want 2", n)
	}
	// Alone in its group too.
	func() {
		defer func() {
			if p := recover(); p != "alone" {
				t.Errorf("a lone panicking write recovered %v, want alone", p)
			}
		}()
		_ = s.WithTx(ctx, func(context.Context, *sqlx.Tx) error { panic("alone") })
	}()
	if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
		t.Errorf("write after a lone panic: %v", err)
	}
}

// TestGroupCommitSurvivesGoexit: a function that ends the writer
// goroutine (runtime.Goexit, as t.FailNow would) fails its whole group,
// since nothing of it was committed, and a new writer serves the writes
// that follow.
func TestGroupCommitSurvivesGoexit(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 10)
	release := holdWriter(t, s)
	exited := make(chan error, 1)
	go func() {
		exited <- s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
				VALUES ('acct_goexit', 'g', 1, 1, ?)`, FormatTime(t0)); err != nil {
				return err
			}
			runtime.Goexit()
			return nil
		})
	}()
	waitQueued(t, s, 1)
	other := make(chan error, 1)
	go func() { _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); other <- err }()
	waitQueued(t, s, 2)
	release()
	if err := <-exited; !errors.Is(err, errWriterExited) {
		t.Errorf("the exiting function's caller: %v, want errWriterExited", err)
	}
	if err := <-other; !errors.Is(err, errWriterExited) {
		t.Errorf("the write beside it: %v, want errWriterExited", err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM accounts WHERE id = 'acct_goexit'`); n != 0 {
		t.Error("the exiting function's write was kept")
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); n != 0 {
		t.Errorf("%d jobs after the failed group, want 0", n)
	}
	for i := range 3 {
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
			t.Fatalf("write %d after the exit: %v", i, err)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); n != 3 {
		t.Errorf("%d jobs, want 3", n)
	}
}

// TestGroupCommitEachCallerKeepsItsBusyWait: while the writer waits for
// another process's lock on behalf of a first caller with the default
// busy wait (5 s), a request queued behind it through a view with a 300 ms
// busy wait still gets ErrBusy after about its own wait, not the first
// caller's: callers are taken into a group only once the group's
// transaction holds the lock.
func TestGroupCommitEachCallerKeepsItsBusyWait(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	release := foreignLock(t, s)
	first := make(chan error, 1)
	go func() { first <- s.WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil }) }()
	waitQueued(t, s, 1)
	time.Sleep(20 * time.Millisecond) // the writer is asking SQLite for the lock
	start := time.Now()
	err := s.WithBusyWait(300*time.Millisecond).WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil })
	if took := time.Since(start); !errors.Is(err, locrisk.ErrBusy) || took > 3*time.Second {
		t.Errorf("request behind a held-up first caller: %v after %s; want ErrBusy after about 300 ms", err, took.Round(time.Millisecond))
	}
	release()
	if err := <-first; err != nil {
		t.Errorf("first caller after the lock was released: %v", err)
	}
}

// TestGroupCommitCancelDoesNotInterruptTheGroup: a function's statements
// run on the context WithTx hands it, without the caller's cancellation,
// because SQLite rolls back the whole transaction, the group's, when a
// write statement inside it is interrupted. A caller cancelled while its
// long statement runs therefore costs nobody else their writes.
func TestGroupCommitCancelDoesNotInterruptTheGroup(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	insert := func(ctx context.Context, tx *sqlx.Tx, id string) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
			VALUES (?, 'grp', 1, 1, ?)`, id, FormatTime(t0))
		return err
	}
	release := holdWriter(t, s)
	errs := make(chan error, 3)
	go func() {
		errs <- s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error { return insert(ctx, tx, "acct_a") })
	}()
	waitQueued(t, s, 1)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		errs <- s.WithTx(cctx, func(ctx context.Context, tx *sqlx.Tx) error {
			time.AfterFunc(20*time.Millisecond, cancel) // the client goes away meanwhile
			_, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
				SELECT 'acct_slow', 'grp', 1, 1, '' WHERE (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
					SELECT COUNT(*) FROM n) > 0`)
			return err
		})
	}()
	waitQueued(t, s, 2)
	go func() {
		errs <- s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error { return insert(ctx, tx, "acct_c") })
	}()
	waitQueued(t, s, 3)
	release()
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("a caller of the group failed: %v", err)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM accounts WHERE name = 'grp'`); n != 3 {
		t.Errorf("%d rows of the group committed, want 3", n)
	}
}

// TestGroupCommitFirstCallerHonoursItsContext: the caller queued first,
// for whom the writer waits for the write slot, gives up when its context
// ends, and the caller queued behind it goes on.
func TestGroupCommitFirstCallerHonoursItsContext(t *testing.T) {
	s := newStore(t, Options{})
	a := newAccount(t, s, 10)
	s.slot.ch <- struct{}{} // a writer outside the groups holds the slot
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	led := make(chan error, 1)
	start := time.Now()
	go func() { led <- s.WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil }) }()
	waitQueued(t, s, 1)
	behind := make(chan error, 1)
	go func() { _, _, err := s.CreateJob(context.Background(), apiJob(a.ID), t0); behind <- err }()
	waitQueued(t, s, 2)
	if err := <-led; !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("first caller with a 100 ms deadline: %v after %s", err, time.Since(start).Round(time.Millisecond))
	}
	<-s.slot.ch
	if err := <-behind; err != nil {
		t.Errorf("the caller behind the first: %v", err)
	}
}

// TestIdempotencyKeyOfUnknownAccount: creating for an unknown account with
// an idempotency key is ErrNotFound, as without one.
func TestIdempotencyKeyOfUnknownAccount(t *testing.T) {
	s := newStore(t, Options{})
	nj := locrisk.NewJob{AccountID: "acct_nope", Latitude: 1, Longitude: 1, IdempotencyKey: "k", RequestHash: "h"}
	if _, _, err := s.CreateJob(context.Background(), nj, t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("job: %v, want ErrNotFound", err)
	}
	nb := locrisk.NewBatch{AccountID: "acct_nope", IdempotencyKey: "k", RequestHash: "h", Items: []locrisk.NewBatchItem{{ExternalID: "1", Latitude: new(1.0), Longitude: new(2.0)}}}
	if _, _, err := s.CreateBatch(context.Background(), nb, t0); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("batch: %v, want ErrNotFound", err)
	}
}

// createWrites returns group writes for n CreateJob calls of account a
// (with keys key-<i>-<prefix> when keyed) whose functions must not run:
// runGroup is to make them together.
func createWrites(t *testing.T, a locrisk.Account, prefix string, n int, keyed bool) []*groupWrite {
	t.Helper()
	ws := make([]*groupWrite, n)
	for i := range ws {
		c := &jobCreation{job: locrisk.Job{
			ID: fmt.Sprintf("job_%s%03d", prefix, i), AccountID: a.ID, Bucket: locrisk.BucketAPI,
			Latitude: 37.77 + float64(i)/1000, Longitude: -122.42, Status: locrisk.StatusQueued,
			RunAfterUTC: t0, CreatedUTC: t0, UpdatedUTC: t0,
		}}
		if keyed {
			c.key, c.hash = fmt.Sprintf("key-%s%d", prefix, i), "hash"
		}
		ws[i] = &groupWrite{ctx: context.Background(), kind: jobCreate, arg: c, fn: func(context.Context, *sqlx.Tx) error {
			t.Errorf("job %s: made one at a time", c.job.ID)
			return nil
		}}
	}
	return ws
}

// creation is the job creation of a write of createWrites.
func creation(w *groupWrite) *jobCreation { return w.arg.(*jobCreation) }

// runGroupTx runs group as one transaction, as the writer does.
func runGroupTx(t *testing.T, s *Store, group []*groupWrite) {
	t.Helper()
	var wc writeConn
	defer wc.release()
	if err := wc.runTx(context.Background(), s, func(tx *sqlx.Tx) error { return runGroup(tx, group) }); err != nil {
		t.Fatalf("group: %v", err)
	}
}

// TestJobsCreatedTogether: job creations queued one after the other are
// made with one set of statements, and leave exactly what their functions
// would have: every job as given, its key pointing at it, the quota and
// the usage counters counting each once.
func TestJobsCreatedTogether(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	b := newAccount(t, s, 100)
	// More than rowsPerInsert, from two accounts, with and without keys.
	group := append(createWrites(t, a, "a", rowsPerInsert+5, true), createWrites(t, b, "b", 3, false)...)
	// A caller that gave up before the group ran is left out.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	gone := group[4]
	gone.ctx = cctx
	group[4] = gone
	runGroupTx(t, s, group)
	if !errors.Is(gone.err, context.Canceled) {
		t.Errorf("the caller that gave up: %v, want context.Canceled", gone.err)
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs WHERE id = ?`, creation(gone).job.ID); n != 0 {
		t.Error("the job of the caller that gave up was made")
	}
	group = append(group[:4], group[5:]...)
	for _, w := range group {
		if w.err != nil {
			t.Errorf("job %s: %v", creation(w).job.ID, w.err)
			continue
		}
		got, err := s.GetJob(ctx, creation(w).job.AccountID, creation(w).job.ID)
		if err != nil {
			t.Errorf("job %s: %v", creation(w).job.ID, err)
		} else if got != creation(w).job {
			t.Errorf("job stored as %+v, want %+v", got, creation(w).job)
		}
		if creation(w).key != "" {
			if n := countRows(t, s, `SELECT COUNT(*) FROM idempotency_keys WHERE account_id = ? AND key = ? AND resource_id = ? AND request_hash = ?`,
				creation(w).job.AccountID, creation(w).key, creation(w).job.ID, creation(w).hash); n != 1 {
				t.Errorf("key %s: %d rows pointing at its job", creation(w).key, n)
			}
		}
	}
	for _, acct := range []struct {
		id   string
		jobs int
	}{{a.ID, rowsPerInsert + 4}, {b.ID, 3}} {
		got, err := s.PeriodUsage(ctx, acct.id, t0)
		if err != nil {
			t.Fatal(err)
		}
		if want := oraclePeriodUsage(t, s, acct.id, t0); got != want || got.Created != acct.jobs || got.Queued != acct.jobs {
			t.Errorf("usage %+v, want %+v with %d created and queued", got, want, acct.jobs)
		}
		if n := countRows(t, s, `SELECT report_jobs FROM quota_usage WHERE account_id = ?`, acct.id); n != acct.jobs {
			t.Errorf("quota counter %d, want %d", n, acct.jobs)
		}
	}
	// A replay of one of the keys finds its job.
	nj := apiJob(a.ID)
	nj.IdempotencyKey, nj.RequestHash = creation(group[2]).key, creation(group[2]).hash
	if job, replayed, err := s.CreateJob(ctx, nj, t0); err != nil || !replayed || job.ID != creation(group[2]).job.ID {
		t.Errorf("replay: %s %v %v, want %s replayed", job.ID, replayed, err, creation(group[2]).job.ID)
	}
}

// TestJobsCreatedTogetherOnlyWhenAllSucceed: where making the jobs of a
// run together might differ from making them one after the other (a key
// seen before or twice, a quota too small for all, an unknown account),
// none of the run's writes are kept from the attempt and each function
// runs in turn to its own outcome.
func TestJobsCreatedTogetherOnlyWhenAllSucceed(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, s *Store, a locrisk.Account, ws []*groupWrite)
	}{
		{"key seen before", func(t *testing.T, s *Store, a locrisk.Account, ws []*groupWrite) {
			nj := apiJob(a.ID)
			nj.IdempotencyKey, nj.RequestHash = creation(ws[3]).key, "hash"
			if _, _, err := s.CreateJob(ctx, nj, t0); err != nil {
				t.Fatal(err)
			}
		}},
		{"same key twice", func(t *testing.T, s *Store, a locrisk.Account, ws []*groupWrite) {
			creation(ws[4]).key = creation(ws[1]).key
		}},
		{"quota for fewer", func(t *testing.T, s *Store, a locrisk.Account, ws []*groupWrite) {
			if _, err := s.db.Exec(`UPDATE accounts SET monthly_quota = ? WHERE id = ?`, len(ws)-1, a.ID); err != nil {
				t.Fatal(err)
			}
		}},
		{"unknown account", func(t *testing.T, s *Store, a locrisk.Account, ws []*groupWrite) {
			creation(ws[2]).job.AccountID = "acct_unknown"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, Options{})
			a := newAccount(t, s, 100)
			group := createWrites(t, a, "x", 6, true)
			tt.setup(t, s, a, group)
			jobsBefore := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`)
			ran := 0
			for _, w := range group {
				w.fn = func(context.Context, *sqlx.Tx) error { ran++; return nil } // writes nothing
			}
			runGroupTx(t, s, group)
			if ran != len(group) {
				t.Errorf("%d of %d functions ran one at a time", ran, len(group))
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); n != jobsBefore {
				t.Errorf("%d jobs after the attempt, want the %d from before", n, jobsBefore)
			}
			if n := countRows(t, s, `SELECT COUNT(*) FROM idempotency_keys WHERE key LIKE 'key-x%' AND resource_id LIKE 'job_x%'`); n != 0 {
				t.Errorf("%d keys of the attempt kept", n)
			}
		})
	}
}

// TestJobsCreatedTogetherKeepTheirOrder: a write queued between job
// creations runs between them, so the creations after it see it: here it
// lowers the quota to what is used, and the creations after it are
// refused while those before it stand.
func TestJobsCreatedTogetherKeepTheirOrder(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	release := holdWriter(t, s)
	type result struct {
		i   int
		err error
	}
	results := make(chan result, 7)
	create := func(i int) {
		go func() { _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); results <- result{i, err} }()
	}
	for i := range 3 {
		create(i)
		waitQueued(t, s, i+1)
	}
	go func() {
		results <- result{3, s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE accounts SET monthly_quota =
				(SELECT report_jobs FROM quota_usage WHERE account_id = accounts.id) WHERE id = ?`, a.ID)
			return err
		})}
	}()
	waitQueued(t, s, 4)
	for i := 4; i < 7; i++ {
		create(i)
		waitQueued(t, s, i+1)
	}
	release()
	for range 7 {
		r := <-results
		switch {
		case r.i <= 3 && r.err != nil:
			t.Errorf("write %d: %v", r.i, r.err)
		case r.i > 3 && !errors.Is(r.err, locrisk.ErrQuotaExceeded):
			t.Errorf("create %d after the quota was lowered: %v, want ErrQuotaExceeded", r.i, r.err)
		}
	}
	if n := countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); n != 3 {
		t.Errorf("%d jobs, want 3", n)
	}
}

// TestWriteConnBusyTimeout: the writer's connection, kept from one group
// to the next, has the busy timeout of each group's view while the group
// runs, and the default again once it goes back to the pool.
func TestWriteConnBusyTimeout(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	timeout := func(tx *sqlx.Tx) int {
		var ms int
		if err := tx.Get(&ms, `PRAGMA busy_timeout`); err != nil {
			t.Fatal(err)
		}
		return ms
	}
	var wc writeConn
	for _, view := range []struct {
		s    *Store
		want int
	}{
		{s, int(DefaultBusyWait.Milliseconds())},
		{s.WithBusyWait(300 * time.Millisecond), 300},
		{s.WithBusyWait(300 * time.Millisecond), 300},
		{s.WithBusyWait(DefaultBusyWait), int(DefaultBusyWait.Milliseconds())},
		{s.WithBusyWait(2 * time.Second), 2000},
	} {
		if err := wc.runTx(ctx, view.s, func(tx *sqlx.Tx) error {
			if got := timeout(tx); got != view.want {
				t.Errorf("busy timeout %d ms in a group of a view with %d ms", got, view.want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	wc.release()
	// Every connection of the pool, the released one among them, has the
	// default.
	for i := range s.db.Stats().MaxOpenConnections {
		c, err := s.db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var ms int
		if err := c.GetContext(ctx, &ms, `PRAGMA busy_timeout`); err != nil {
			t.Fatal(err)
		}
		if ms != int(DefaultBusyWait.Milliseconds()) {
			t.Errorf("connection %d of the pool: busy timeout %d ms, want the default", i, ms)
		}
	}
}

// TestJobsCreatedTogetherCountQuotaByMonth: the quota of jobs made
// together is counted per account and calendar month, as one at a time:
// creations either side of a month's end, queued together, are refused
// only where their own month is full.
func TestJobsCreatedTogetherCountQuotaByMonth(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 5)
	october := time.Date(2026, 10, 31, 23, 59, 0, 0, time.UTC)
	november := october.Add(2 * time.Minute)
	for range 4 {
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), october); err != nil {
			t.Fatal(err)
		}
	}
	release := holdWriter(t, s)
	at := []time.Time{november, november, october, october}
	errs := make([]error, len(at))
	var wg sync.WaitGroup
	for i := range at {
		wg.Add(1)
		go func() { defer wg.Done(); _, _, errs[i] = s.CreateJob(ctx, apiJob(a.ID), at[i]) }()
		waitQueued(t, s, i+1)
	}
	release()
	wg.Wait()
	for i, err := range errs[:3] {
		if err != nil {
			t.Errorf("create %d: %v", i, err)
		}
	}
	if !errors.Is(errs[3], locrisk.ErrQuotaExceeded) {
		t.Errorf("the sixth job of October: %v, want ErrQuotaExceeded", errs[3])
	}
	for _, m := range []struct {
		start time.Time
		want  int
	}{{locrisk.MonthStart(october), 5}, {locrisk.MonthStart(november), 2}} {
		if n := countRows(t, s, `SELECT report_jobs FROM quota_usage WHERE account_id = ? AND period_start_utc = ?`, a.ID, FormatTime(m.start)); n != m.want {
			t.Errorf("quota counter of %s: %d, want %d", m.start.Format("January"), n, m.want)
		}
	}
}

// TestGroupCommitWithOneConnection: with a pool of one connection the
// writer does not keep it between groups, so a single-statement write
// that takes the write slot meanwhile (creating an account) gets it, and
// nothing waits for ever.
func TestGroupCommitWithOneConnection(t *testing.T) {
	s := newStore(t, Options{MaxOpenConns: 1})
	ctx := context.Background()
	for range 20 {
		release := holdWriter(t, s)
		done := make(chan error, 3)
		go func() { done <- s.WithTx(ctx, func(context.Context, *sqlx.Tx) error { return nil }) }()
		waitQueued(t, s, 1)
		go func() { _, err := s.CreateAccount(ctx, "one conn", 10, 60); done <- err }()
		go func() { _, err := s.GetAccount(ctx, "acct_none"); done <- nil; _ = err }()
		time.Sleep(20 * time.Millisecond) // the account's write is waiting for the slot
		release()
		for range 3 {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a write or read still waiting after 10 s: the writer kept the only connection")
			}
		}
	}
}

// TestCloseWaitsForQueuedWrites: Close returns only once the writes queued
// before it have committed, each with its own outcome, and a write begun
// after it fails with ErrClosed, so nothing commits once Close returns.
func TestCloseWaitsForQueuedWrites(t *testing.T) {
	s := newStore(t, Options{})
	path := storePath(t, s)
	a := newAccount(t, s, 100)
	release := holdWriter(t, s)
	const queued = 3
	errs := make(chan error, queued)
	for i := range queued {
		go func() {
			_, _, err := s.CreateJob(context.Background(), locrisk.NewJob{AccountID: a.ID, Bucket: locrisk.BucketAPI, Latitude: float64(i), Longitude: 1}, t0)
			errs <- err
		}()
	}
	waitQueued(t, s, queued)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	// Close stops taking writes before it waits: a new one fails.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.group.mu.Lock()
		closing := s.group.closed
		s.group.mu.Unlock()
		if closing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Close has not begun after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.WithTx(context.Background(), func(context.Context, *sqlx.Tx) error { return nil }); !errors.Is(err, locrisk.ErrClosed) {
		t.Fatalf("write during Close: %v, want ErrClosed", err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with writes still queued", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	s.group.mu.Lock()
	writers := s.group.writers
	s.group.mu.Unlock()
	if writers != 0 {
		t.Errorf("%d writer goroutines left after Close", writers)
	}
	for range queued {
		if err := <-errs; err != nil {
			t.Errorf("write queued before Close: %v", err)
		}
	}
	if _, _, err := s.CreateJob(context.Background(), apiJob(a.ID), t0); !errors.Is(err, locrisk.ErrClosed) {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
	again := openStore(t, path, Options{})
	if n := countRows(t, again, `SELECT COUNT(*) FROM report_jobs`); n != queued {
		t.Errorf("%d jobs in the file after Close, want the %d queued before it", n, queued)
	}
}

// TestCloseWaitsForSingleStatementWrite: a single-statement write holding
// the write slot (withWriteLock) when Close begins still commits, before
// Close returns; one begun after fails with ErrClosed.
func TestCloseWaitsForSingleStatementWrite(t *testing.T) {
	s := newStore(t, Options{})
	path := storePath(t, s)
	a := newAccount(t, s, 100)
	ctx := context.Background()
	update := func() error {
		_, err := s.db.ExecContext(ctx, `UPDATE accounts SET monthly_quota = monthly_quota + 1 WHERE id = ?`, a.ID)
		return err
	}
	inside, free, wrote := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() { wrote <- s.withWriteLock(ctx, func() error { close(inside); <-free; return update() }) }()
	<-inside
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) during a single-statement write", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(free)
	if err := <-wrote; err != nil {
		t.Errorf("write begun before Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := s.withWriteLock(ctx, update); !errors.Is(err, locrisk.ErrClosed) {
		t.Errorf("write after Close: %v, want ErrClosed", err)
	}
	again := openStore(t, path, Options{})
	if n := countRows(t, again, `SELECT monthly_quota FROM accounts WHERE id = ?`, a.ID); n != 101 {
		t.Errorf("quota %d after Close, want 101: the write begun before Close, and only it", n)
	}
}

// TestGroupRunsOfOneKind: the group commit knows no particular write. A
// run of writes of one kind (two or more queued one after the other) goes
// to that kind's merge, in queue order; a write of another kind, or of
// none, ends the run; a write alone, or a run whose merge declines, runs
// its functions one at a time.
func TestGroupRunsOfOneKind(t *testing.T) {
	s := newStore(t, Options{})
	var merged [][]any
	var ran []string
	kind := func(ok bool) *writeKind {
		return &writeKind{merge: func(_ context.Context, _ *sqlx.Tx, args []any) bool {
			merged = append(merged, args)
			return ok
		}}
	}
	a, b, declines := kind(true), kind(true), kind(false)
	write := func(k *writeKind, name string) *groupWrite {
		return &groupWrite{ctx: context.Background(), kind: k, arg: name, fn: func(context.Context, *sqlx.Tx) error {
			ran = append(ran, name)
			return nil
		}}
	}
	group := []*groupWrite{write(a, "a1"), write(a, "a2"), write(nil, "plain"), write(b, "b1"), write(a, "a3"),
		write(declines, "d1"), write(declines, "d2"), write(b, "b2")}
	runGroupTx(t, s, group)
	if got, want := fmt.Sprint(merged), "[[a1 a2] [d1 d2]]"; got != want {
		t.Errorf("merged %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(ran), "[plain b1 a3 d1 d2 b2]"; got != want {
		t.Errorf("ran one at a time %s, want %s", got, want)
	}
	for _, w := range group {
		if w.err != nil {
			t.Errorf("%s: %v", w.arg, w.err)
		}
	}
}
