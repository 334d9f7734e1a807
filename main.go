// Command locrisk is the location-risk report service and its operator
// command line: `serve` runs the HTTP API and the job workers; `accounts`
// and `keys` manage accounts and API keys in the same database file (safe
// while the server runs: SQLite WAL and a busy timeout); `data check` lists
// the public data sets the engine needs and whether they are present.
//
// Every flag can also come from the environment as LOCRISK_<FLAG> (upper
// case, '-' as '_'); a flag on the command line wins over the environment.
// Exit status: 0 success, 1 failure, 2 usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"locrisk/delivery"
	"locrisk/jobs"
	"locrisk/outbox"
	"locrisk/risk"
	"locrisk/server"
	"locrisk/store"
	"locrisk/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// usageError is a mistake in the command line: its message is printed with
// a pointer to -h, and the exit status is 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// env looks up an environment variable (os.LookupEnv, or a map in tests).
type env func(string) (string, bool)

// cli carries what every command needs; no global state.
type cli struct {
	ctx    context.Context
	env    env
	stdout io.Writer
	stderr io.Writer
}

// command is one subcommand: its path ("keys create"), a one-line summary,
// and its implementation.
type command struct {
	path    string
	summary string
	run     func(c *cli, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP API and the report job workers", (*cli).serve},
		{"accounts create", "create an account and print its id", (*cli).accountsCreate},
		{"keys create", "create an API key and print its secret (shown once)", (*cli).keysCreate},
		{"keys list", "list API keys (never their secrets)", (*cli).keysList},
		{"keys revoke", "revoke an API key", (*cli).keysRevoke},
		{"data check", "check the public data sets the engine reads", (*cli).dataCheck},
		{"data validate", "score the validation table of well-known places and check its orderings", (*cli).dataValidate},
		{"report", "queue a report job (bucket manual), wait for it and print the summary or PDF", (*cli).report},
	}
}

func run(ctx context.Context, args []string, lookup env, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, env: lookup, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		c.topUsage(stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		c.topUsage(stdout)
		return exitOK
	}
	var cmd *command
	var rest []string
	for _, k := range commands() {
		words := strings.Fields(k.path)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			cmd, rest = &k, args[len(words):]
			break
		}
	}
	if cmd == nil {
		// "keys -h" asks for the list of commands; "keys" alone or "keys
		// bogus" is a usage error that shows it.
		if len(args) == 2 && (args[1] == "-h" || args[1] == "-help" || args[1] == "--help") && c.isGroup(args[0]) {
			c.topUsage(stdout)
			return exitOK
		}
		if c.isGroup(args[0]) && len(args) == 1 {
			fmt.Fprintf(stderr, "locrisk: %q needs a subcommand\n\n", args[0])
		} else {
			fmt.Fprintf(stderr, "locrisk: unknown command %q\n\n", strings.Join(args[:min(len(args), 2)], " "))
		}
		c.topUsage(stderr)
		return exitUsage
	}
	err := cmd.run(c, rest)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "locrisk %s: %s\nRun 'locrisk %s -h' for help.\n", cmd.path, ue.msg, cmd.path)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "locrisk %s: %v\n", cmd.path, err)
		return exitError
	}
}

// isGroup reports whether word starts a multi-word command ("keys").
func (c *cli) isGroup(word string) bool {
	for _, k := range commands() {
		if first, _, ok := strings.Cut(k.path, " "); ok && first == word {
			return true
		}
	}
	return false
}

func (c *cli) topUsage(w io.Writer) {
	fmt.Fprint(w, `locrisk: location-risk reports for US coordinates, as an HTTP API.

Usage:
  locrisk <command> [flags]

Commands:
`)
	for _, k := range commands() {
		fmt.Fprintf(w, "  %-16s %s\n", k.path, k.summary)
	}
	fmt.Fprint(w, `
Every flag can also be set in the environment as LOCRISK_<FLAG>
(for example --data-dir as LOCRISK_DATA_DIR); the command line wins.
Run 'locrisk <command> -h' for a command's flags and examples.

Quick start:
  locrisk accounts create --name "Demo"                  # prints acct_...
  locrisk keys create --account acct_... --scopes reports:create,reports:read
  locrisk serve --data-dir ../shared/data
`)
}

// flags wraps a FlagSet with the environment fallback and help text.
type flags struct {
	*flag.FlagSet
	c        *cli
	path     string
	synopsis string
	about    string
	examples string
}

func (c *cli) newFlags(path, synopsis, about, examples string) *flags {
	fs := flag.NewFlagSet("locrisk "+path, flag.ContinueOnError)
	f := &flags{FlagSet: fs, c: c, path: path, synopsis: synopsis, about: about, examples: examples}
	fs.SetOutput(io.Discard) // parse errors are reported once, by run
	fs.Usage = func() {}
	return f
}

func (f *flags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage:\n  locrisk %s %s\n\n%s\n\nFlags (each also read from the environment variable shown):\n", f.path, f.synopsis, strings.TrimSpace(f.about))
	f.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		line := "  --" + fl.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n        %s", line, usage)
		if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		fmt.Fprintf(w, " [$%s]\n", envName(fl.Name))
	})
	if f.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", strings.Trim(f.examples, "\n"))
	}
}

// envName is the environment variable for a flag: LOCRISK_ + upper case,
// '-' as '_'.
func envName(flagName string) string {
	return "LOCRISK_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse parses args (flags may come before or after positional arguments),
// fills flags not given on the command line from the environment, and
// returns the positional arguments. -h prints the help to stdout and
// returns flag.ErrHelp.
func (f *flags) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.usage(f.c.stdout)
				return nil, flag.ErrHelp
			}
			return nil, usagef("%v", err)
		}
		rest := f.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...) // everything after "--" is positional
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var err error
	f.VisitAll(func(fl *flag.Flag) {
		if set[fl.Name] || err != nil {
			return
		}
		name := envName(fl.Name)
		if v, ok := f.c.env(name); ok {
			if serr := f.Set(fl.Name, v); serr != nil {
				err = usagef("invalid value %q in %s: %v", v, name, serr)
			}
		}
	})
	return pos, err
}

// noArgs rejects positional arguments for commands that take none.
// parseNoArgs parses a command that takes flags only.
func (f *flags) parseNoArgs(args []string) error {
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	return noArgs(pos)
}

func noArgs(pos []string) error {
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

func (c *cli) openStore(path string) (*store.Store, error) { return c.openStoreNotify(path, nil) }

// openStoreNotify opens the database with the webhook outbox registered, so
// that every process that can finish a job (serve, and report with its own
// worker) records the job's webhook events. wake rouses this process's
// delivery worker; without one (nil), a running server's worker finds the
// events at its next poll.
func (c *cli) openStoreNotify(path string, wake func()) (*store.Store, error) {
	if path == "" {
		return nil, usagef("--db is empty")
	}
	return store.OpenWith(c.ctx, path, store.Options{OnJobFinal: []store.JobFinalHook{outbox.Hook(wake)}})
}

// ---- serve ----

type serveConfig struct {
	addr, db, dataDir, faults, logFormat, webhookSchedule string
	workers, maxAttempts                                  int
	webhookAllowPrivate                                   bool
	shutdownTimeout, jobLease                             time.Duration
}

func (c *cli) serve(args []string) error {
	var cfg serveConfig
	f := c.newFlags("serve", "[flags]", `
Runs the HTTP API (under /api/v1) and the report job workers, on one
SQLite database file. The engine loads every public data set from
--data-dir at start-up; if any is missing, serve exits at once and names
what is missing and where its publisher offers it.

SIGTERM or SIGINT stops it gracefully: it stops accepting connections,
lets requests and jobs in hand finish (bounded by --shutdown-timeout),
releases unfinished jobs back to the queue, and exits 0.`, `
  locrisk serve --data-dir ../shared/data
  locrisk serve --addr 0.0.0.0:8080 --db /var/lib/locrisk/locrisk.db --workers 4
  LOCRISK_DATA_DIR=../shared/data LOCRISK_LOG_FORMAT=json locrisk serve
  locrisk serve --data-dir ../shared/data --faults report.generate=transient:first=1`)
	f.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	f.StringVar(&cfg.db, "db", "./locrisk.db", "SQLite database `file` (created if absent)")
	f.StringVar(&cfg.dataDir, "data-dir", "", "`directory` holding the public data sets (required)")
	f.IntVar(&cfg.workers, "workers", runtime.NumCPU(), "report job worker goroutines")
	f.IntVar(&cfg.maxAttempts, "job-max-attempts", 3, "attempts per job before a transient failure is final")
	f.StringVar(&cfg.webhookSchedule, "webhook-retry-schedule", webhook.DefaultScheduleSpec, "comma-separated `delays` between webhook delivery attempts")
	f.BoolVar(&cfg.webhookAllowPrivate, "webhook-allow-private", false, "allow webhook URLs on private/loopback addresses and plain http (testing only)")
	f.StringVar(&cfg.faults, "faults", "", "inject failures for resilience tests: `SPEC` such as report.generate=transient:first=1 or report.generate=permanent:rate=0.5")
	f.StringVar(&cfg.logFormat, "log-format", "text", "log `format` on stderr: text or json")
	f.DurationVar(&cfg.jobLease, "job-lease", 30*time.Second, "how long a worker holds a job; a job whose worker died runs again after this")
	f.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a graceful stop waits for requests and jobs")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if cfg.workers < 1 {
		return usagef("--workers must be at least 1, got %d", cfg.workers)
	}
	if cfg.maxAttempts < 1 {
		return usagef("--job-max-attempts must be at least 1, got %d", cfg.maxAttempts)
	}
	if cfg.jobLease < time.Second {
		return usagef("--job-lease must be at least 1s, got %s", cfg.jobLease)
	}
	if cfg.shutdownTimeout <= 0 {
		return usagef("--shutdown-timeout must be positive")
	}
	schedule, err := webhook.ParseSchedule(cfg.webhookSchedule)
	if err != nil {
		return usagef("--webhook-retry-schedule: %v", err)
	}
	faults, err := jobs.ParseFaults(cfg.faults)
	if err != nil {
		return usagef("--faults: %v", err)
	}
	var handler slog.Handler
	switch cfg.logFormat {
	case "text":
		handler = slog.NewTextHandler(c.stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(c.stderr, nil)
	default:
		return usagef("--log-format must be text or json, got %q", cfg.logFormat)
	}
	log := slog.New(handler)
	if cfg.dataDir == "" {
		return usagef("no data directory: set --data-dir (or LOCRISK_DATA_DIR) to the directory holding the public data sets; " +
			"'locrisk data check --data-dir DIR' lists every file the engine needs and where its publisher offers it")
	}

	// The data files first: without them there is nothing to serve, and no
	// database file should be created.
	if err := risk.CheckFiles(cfg.dataDir); err != nil {
		return fmt.Errorf("loading data from %s: %w", cfg.dataDir, err)
	}

	// The outbox hook wakes the delivery worker, which needs the store, so
	// the signal between them comes first.
	wake := delivery.NewSignal()
	st, err := c.openStoreNotify(cfg.db, wake.Notify)
	if err != nil {
		return err
	}
	defer st.Close()

	// The engine keeps its reference distributions in the database, so only
	// the first start after a data change builds them.
	eng, err := risk.Load(c.ctx, cfg.dataDir, log, st)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", cfg.dataDir, err)
	}

	sched := jobs.New(st, eng, jobs.Config{Workers: cfg.workers, MaxAttempts: cfg.maxAttempts, Lease: cfg.jobLease,
		Faults: faults, Logger: log, DrainTimeout: cfg.shutdownTimeout})
	if faults.Enabled() {
		log.Warn("fault injection is on", "faults", faults.String())
	}
	deliveries := delivery.New(st, delivery.Config{Schedule: schedule, AllowPrivate: cfg.webhookAllowPrivate, Wake: wake, Logger: log})
	log.Info("webhook settings", "retry_schedule", cfg.webhookSchedule, "attempts", webhook.MaxAttempts(schedule),
		"allow_private", cfg.webhookAllowPrivate)

	api := server.New(server.Config{Logger: log, Webhooks: server.WebhookConfig{AllowPrivate: cfg.webhookAllowPrivate}}, st, eng, sched.Notify)
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	httpSrv := &http.Server{
		Handler:           api.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(handler, slog.LevelWarn),
	}

	schedCtx, stopSched := context.WithCancel(context.WithoutCancel(c.ctx))
	defer stopSched()
	schedDone := make(chan struct{})
	go func() { sched.Run(schedCtx); close(schedDone) }()
	deliveriesDone := make(chan struct{})
	// The delivery worker outlives the scheduler's drain, so events of jobs
	// finished while draining go out now rather than at the next start.
	delivCtx, stopDeliveries := context.WithCancel(context.WithoutCancel(c.ctx))
	defer stopDeliveries()
	go func() { deliveries.Run(delivCtx); close(deliveriesDone) }()

	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "db", cfg.db, "workers", cfg.workers)

	var failed error
	select {
	case <-c.ctx.Done():
		log.Info("shutting down", "timeout", cfg.shutdownTimeout)
	case err := <-serveErr:
		failed = fmt.Errorf("http server: %w", err)
		log.Error("http server stopped", "err", err)
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), cfg.shutdownTimeout)
	defer cancel()
	// Requests and jobs in hand drain side by side, so the whole stop stays
	// within --shutdown-timeout (plus a moment to release cut-off jobs).
	stopSched()
	if err := httpSrv.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown incomplete", "err", err)
	}
	<-schedDone
	// Attempts in flight finish or are released (due again at the next start).
	stopDeliveries()
	<-deliveriesDone
	if err := api.Close(shutCtx); err != nil { // saves the request statistics still in memory
		log.Warn("saving request statistics", "err", err)
	}
	if err := st.Close(); err != nil {
		log.Warn("closing database", "err", err)
	}
	if failed != nil {
		return failed
	}
	log.Info("stopped")
	return nil
}

// ---- accounts ----

func (c *cli) accountsCreate(args []string) error {
	var name, db string
	var quota, rate int
	var asJSON bool
	f := c.newFlags("accounts create", "--name NAME [flags]", `
Creates an account and prints its id (acct_...) alone on stdout, or
{"id": ...} with --json. The monthly quota counts report jobs created per
calendar month (UTC); the rate limit counts API requests per minute.`, `
  locrisk accounts create --name "Acme Insurance"
  locrisk accounts create --name "Trial" --monthly-quota 50 --rate-limit 60 --json
  ACCOUNT=$(locrisk accounts create --name Demo)`)
	f.StringVar(&name, "name", "", "account `name` (required)")
	f.IntVar(&quota, "monthly-quota", store.DefaultMonthlyQuota, "report jobs per calendar month")
	f.IntVar(&rate, "rate-limit", store.DefaultRateLimit, "API requests per minute")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&db, "db", "./locrisk.db", "SQLite database `file`")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if strings.TrimSpace(name) == "" {
		return usagef("--name is required")
	}
	if quota < 0 {
		return usagef("--monthly-quota must be 0 or more, got %d", quota)
	}
	if rate < 1 {
		return usagef("--rate-limit must be at least 1, got %d", rate)
	}
	st, err := c.openStore(db)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := st.CreateAccount(c.ctx, name, quota, rate)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, map[string]string{"id": a.ID})
	}
	_, err = fmt.Fprintln(c.stdout, a.ID)
	return err
}

// ---- keys ----

func (c *cli) keysCreate(args []string) error {
	var account, scopes, expires, allowIP, db string
	var version int
	var asJSON bool
	f := c.newFlags("keys create", "--account ACCOUNT_ID --scopes s1,s2 [flags]", `
Creates an API key and prints its secret (lrk_...) alone on stdout, or
{"id", "key", "accountId", "scopes"} with --json. The secret is stored only
as a hash: this is the one time it is shown. A running server accepts the
key within a second.

Scopes: `+strings.Join(store.AllScopes(), ", ")+`.
--scope-version 1 marks a key from before usage:read existed: its
reports:read also opens the usage endpoints.`, `
  locrisk keys create --account acct_... --scopes reports:create,reports:read,reports:pdf
  locrisk keys create --account acct_... --scopes usage:read --expires-in 720h --json
  locrisk keys create --account acct_... --scopes reports:read --allow-ip 203.0.113.0/24,2001:db8::/32
  locrisk keys create --account acct_... --scopes reports:read --scope-version 1`)
	f.StringVar(&account, "account", "", "owning account `id` (required)")
	f.StringVar(&scopes, "scopes", "", "comma-separated `scopes` (required)")
	f.StringVar(&expires, "expires-in", "", "lifetime as a `duration` (720h, 90m; also 30d); default never expires")
	f.StringVar(&allowIP, "allow-ip", "", "comma-separated `CIDRs` or addresses the key may be used from; default any")
	f.IntVar(&version, "scope-version", store.ScopeVersionCurrent, "scope version: 2 (current) or 1 (legacy)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&db, "db", "./locrisk.db", "SQLite database `file`")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if account == "" {
		return usagef("--account is required")
	}
	var scopeList []string
	for _, s := range strings.Split(scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			scopeList = append(scopeList, s)
		}
	}
	if len(scopeList) == 0 {
		return usagef("--scopes is required (one or more of %s)", strings.Join(store.AllScopes(), ", "))
	}
	for _, s := range scopeList {
		if !store.ValidScope(s) {
			return usagef("unknown scope %q (known: %s)", s, strings.Join(store.AllScopes(), ", "))
		}
	}
	if version != store.ScopeVersionLegacy && version != store.ScopeVersionCurrent {
		return usagef("--scope-version must be 1 or 2, got %d", version)
	}
	var lifetime time.Duration
	if expires != "" {
		var err error
		if lifetime, err = parseLifetime(expires); err != nil {
			return usagef("--expires-in: %v", err)
		}
	}
	cidrs, err := store.ParseCIDRs(allowIP)
	if err != nil {
		return usagef("--allow-ip: %v", err)
	}
	st, err := c.openStore(db)
	if err != nil {
		return err
	}
	defer st.Close()
	k, secret, err := st.CreateKey(c.ctx, store.NewKey{AccountID: account, Scopes: scopeList, ScopeVersion: version, AllowedCIDRs: cidrs, ExpiresIn: lifetime})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("account %s not found (create one with 'locrisk accounts create --name NAME')", account)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, struct {
			ID        string   `json:"id"`
			Key       string   `json:"key"`
			AccountID string   `json:"accountId"`
			Scopes    []string `json:"scopes"`
		}{k.ID, secret, k.AccountID, k.Scopes})
	}
	_, err = fmt.Fprintln(c.stdout, secret)
	return err
}

// parseLifetime is time.ParseDuration plus whole days ("30d"), positive only.
func parseLifetime(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (use e.g. 720h or 30d)", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration (use e.g. 720h or 30d)", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return d, nil
}

// keyJSON is a key as `keys list --json` shows it.
type keyJSON struct {
	ID           string   `json:"id"`
	AccountID    string   `json:"accountId"`
	SecretHint   string   `json:"secretHint"`
	Scopes       []string `json:"scopes"`
	ScopeVersion int      `json:"scopeVersion"`
	AllowedCIDRs []string `json:"allowedCidrs"`
	CreatedUTC   string   `json:"createdUtc"`
	ExpiresUTC   *string  `json:"expiresUtc"`
	RevokedUTC   *string  `json:"revokedUtc"`
}

func apiTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func apiTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := apiTime(*t)
	return &s
}

func (c *cli) keysList(args []string) error {
	var account, db string
	var asJSON bool
	f := c.newFlags("keys list", "[--account ACCOUNT_ID] [--json]", `
Lists API keys, oldest first: id, account, scopes, secret hint (the first
characters of the secret, to recognise it), and creation, expiry and
revocation times (UTC). Secrets are never stored, so never shown.`, `
  locrisk keys list
  locrisk keys list --account acct_... --json`)
	f.StringVar(&account, "account", "", "only this account's keys")
	f.BoolVar(&asJSON, "json", false, "print a JSON array")
	f.StringVar(&db, "db", "./locrisk.db", "SQLite database `file`")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	st, err := c.openStore(db)
	if err != nil {
		return err
	}
	defer st.Close()
	keys, err := st.ListKeys(c.ctx, account)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]keyJSON, 0, len(keys))
		for _, k := range keys {
			cidrs := make([]string, 0, len(k.AllowedCIDRs))
			for _, p := range k.AllowedCIDRs {
				cidrs = append(cidrs, p.String())
			}
			out = append(out, keyJSON{ID: k.ID, AccountID: k.AccountID, SecretHint: k.SecretHint, Scopes: k.Scopes,
				ScopeVersion: k.ScopeVersion, AllowedCIDRs: cidrs, CreatedUTC: apiTime(k.CreatedUTC),
				ExpiresUTC: apiTimePtr(k.ExpiresUTC), RevokedUTC: apiTimePtr(k.RevokedUTC)})
		}
		return writeJSON(c.stdout, out)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tSCOPES\tHINT\tCREATED\tEXPIRES\tREVOKED\tALLOW-IP")
	orDash := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	for _, k := range keys {
		allow := "-"
		if len(k.AllowedCIDRs) > 0 {
			parts := make([]string, len(k.AllowedCIDRs))
			for i, p := range k.AllowedCIDRs {
				parts[i] = p.String()
			}
			allow = strings.Join(parts, ",")
		}
		scopes := strings.Join(k.Scopes, ",")
		if k.ScopeVersion == store.ScopeVersionLegacy {
			scopes += " (v1)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s...\t%s\t%s\t%s\t%s\n", k.ID, k.AccountID, scopes, k.SecretHint,
			apiTime(k.CreatedUTC), orDash(apiTimePtr(k.ExpiresUTC)), orDash(apiTimePtr(k.RevokedUTC)), allow)
	}
	return tw.Flush()
}

func (c *cli) keysRevoke(args []string) error {
	var db string
	f := c.newFlags("keys revoke", "KEY_ID", `
Revokes an API key (key_..., as 'keys list' shows it). A running server
refuses it within a second. Revoking a revoked key changes nothing.`, `
  locrisk keys revoke key_...`)
	f.StringVar(&db, "db", "./locrisk.db", "SQLite database `file`")
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one KEY_ID, got %d arguments", len(pos))
	}
	st, err := c.openStore(db)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.RevokeKey(c.ctx, pos[0]); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("key %s not found", pos[0])
	} else if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "revoked %s\n", pos[0])
	return err
}

// ---- data ----

func (c *cli) dataCheck(args []string) error {
	var dir string
	f := c.newFlags("data check", "--data-dir DIR", `
Lists every public data set the engine reads: whether its file is present
in the data directory, how many rows it loads, and its vintage; a missing
file is named with where its publisher offers it. Exits 1 if anything is
missing or malformed.`, `
  locrisk data check --data-dir ../shared/data
  LOCRISK_DATA_DIR=../shared/data locrisk data check`)
	f.StringVar(&dir, "data-dir", "", "`directory` holding the public data sets (required)")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if dir == "" {
		return usagef("--data-dir (or LOCRISK_DATA_DIR) is required")
	}
	return risk.Check(c.ctx, dir, c.stdout)
}

func (c *cli) dataValidate(args []string) error {
	var dir string
	f := c.newFlags("data validate", "--data-dir DIR", `
Scores the validation table of well-known US places (docs/methodology.md,
"Validation") and prints each place's overall, module and peril scores,
then every ordering or low that fails and every known gap of the data.
Exits 1 if a check fails. It builds the population-weighted reference
itself, which takes a few seconds.`, `
  locrisk data validate --data-dir ../shared/data`)
	f.StringVar(&dir, "data-dir", "", "`directory` holding the public data sets (required)")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if dir == "" {
		return usagef("--data-dir (or LOCRISK_DATA_DIR) is required")
	}
	eng, err := risk.Load(c.ctx, dir, nil, nil)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", dir, err)
	}
	res, err := eng.Validate(c.ctx, c.stdout)
	if err != nil {
		return err
	}
	if len(res.Failures) > 0 {
		return fmt.Errorf("%d of %d validation checks fail", len(res.Failures), res.Checks)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
