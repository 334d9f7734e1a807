// Command locrisk is the location-risk report service and its operator
// command line: `serve` runs the HTTP API and the job workers; `accounts`
// and `keys` manage accounts and API keys in the same database file (safe
// while the server runs: SQLite WAL and a busy timeout); `data check` lists
// the public data sets the engine needs and whether they are present.
//
// Every flag can also come from the environment as LOCRISK_<FLAG> (upper
// case, '-' as '_'); a flag on the command line wins over the environment.
// Exit status: 0 success, 1 failure, 2 usage error.
//
// Where things are: commands.go holds the command table, run and the
// top-level usage; flags.go the flag-and-environment parsing every command
// uses; cmd_<name>.go one command (or one group: keys, data) each;
// backend.go which database --db names, chosen once, with
// backend_sqlite.go and backend_postgres.go what each kind opens and adds
// to the service; app.go the running service that serve assembles,
// app_run.go its start and stop, listen.go its listeners.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
