package main

// The command table, run (the whole command line as a function, so tests
// drive it in-process) and the top-level usage. Each command lives in its
// own file, cmd_<name>.go; the flag parsing they share is in flags.go.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

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
	stdin  io.Reader // what "-" reads (locrisk score --in -)
	stdout io.Writer
	stderr io.Writer
	// parseOnly stops every command once its flags are parsed (errParsed):
	// the test that checks each -h example parses uses it for the
	// commands it cannot run (serve, data validate).
	parseOnly bool
}

// errParsed is what a command returns in parseOnly mode.
var errParsed = errors.New("flags parsed")

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
		{"accounts list", "list accounts with their quota, rate limit and status", (*cli).accountsList},
		{"accounts update", "change an account's name, quota or rate limit", (*cli).accountsUpdate},
		{"accounts disable", "disable an account: its keys are refused", (*cli).accountsDisable},
		{"accounts enable", "enable a disabled account again", (*cli).accountsEnable},
		{"keys create", "create an API key and print its secret (shown once)", (*cli).keysCreate},
		{"keys list", "list API keys (never their secrets)", (*cli).keysList},
		{"keys revoke", "revoke an API key", (*cli).keysRevoke},
		{"data check", "load every public data set the engine reads and show its rows", (*cli).dataCheck},
		{"data validate", "score the validation table of well-known places and check its orderings", (*cli).dataValidate},
		{"data info", "print the data pack's manifest: version, sources, vintages, licences, sizes", (*cli).dataInfo},
		{"data verify", "check every file of the data pack against its manifest", (*cli).dataVerify},
		{"data export", "write the built-in data pack out to a folder, to inspect or replace its files", (*cli).dataExport},
		{"data fetch", "download a data pack archive, check it, and install it in a folder", (*cli).dataFetch},
		{"data replace", "put a new file in a pack folder in place of one, and rewrite its manifest", (*cli).dataReplace},
		{"data manifest", "rewrite a pack folder's manifest after its files were edited by hand", (*cli).dataManifest},
		{"data diff", "dry run of a new pack: how many rows of a CSV would change, by module", (*cli).dataDiff},
		{"watchlists list", "list an account's watchlists with their item counts", (*cli).watchlistsList},
		{"watchlists items", "list the items of an account's watchlists with their current reports", (*cli).watchlistsItems},
		{"watchlists rescores", "show the backlog of the re-score lane that follows the data", (*cli).watchlistsRescores},
		{"watchlists plan", "plan the re-scores of a data or methodology change now (a server does at its start)", (*cli).watchlistsPlan},
		{"db purge", "delete what the retention period no longer keeps, and give the space back", (*cli).dbPurge},
		{"db migrate", "apply the database migrations this binary carries (once per upgrade on PostgreSQL)", (*cli).dbMigrate},
		{"db vacuum", "switch an older database file to incremental vacuum (once, server stopped)", (*cli).dbVacuum},
		{"report", "queue a report job (bucket manual), wait for it and print the summary or PDF", (*cli).report},
		{"signing-keys list", "list the keys reports are signed with (public halves)", (*cli).signingKeysList},
		{"signing-keys rotate", "make a new report signing key current and retire the old one", (*cli).signingKeysRotate},
		{"report verify", "check a report's signature (JSON or PDF file), offline", (*cli).reportVerify},
		{"report replay", "recompute a saved report with this binary and data and say what differs", (*cli).reportReplay},
		{"score", "score a CSV file of coordinates with the engine directly, no server or quota", (*cli).score},
		{"version", "print the version of this binary", (*cli).version},
	}
}

func run(ctx context.Context, args []string, lookup env, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{ctx: ctx, env: lookup, stdin: stdin, stdout: stdout, stderr: stderr}
	return c.run(args)
}

// run runs one command line with c's context, environment and output.
func (c *cli) run(args []string) int {
	stdout, stderr := c.stdout, c.stderr
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
	// The longest command path that starts the arguments: "report verify"
	// before "report".
	for _, k := range commands() {
		words := strings.Fields(k.path)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) &&
			(cmd == nil || len(words) > len(strings.Fields(cmd.path))) {
			cmd, rest = &k, args[len(words):]
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
	case errors.Is(err, flag.ErrHelp), errors.Is(err, errParsed):
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
	// The summaries start in one column, two spaces past the longest
	// command ("signing-keys rotate").
	width := 0
	for _, k := range commands() {
		width = max(width, len(k.path))
	}
	for _, k := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, k.path, k.summary)
	}
	fmt.Fprint(w, `
Every flag can also be set in the environment as LOCRISK_<FLAG>
(for example --data-dir as LOCRISK_DATA_DIR); the command line wins.
Run 'locrisk <command> -h' for a command's flags and examples.

Quick start:
  locrisk accounts create --name "Demo"                  # prints acct_...
  locrisk keys create --account acct_... --scopes reports:create,reports:read
  locrisk serve
`)
}

// plural is n and noun, with an s unless n is 1: "1 argument", "3 arguments".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// writeJSON writes v as indented JSON: the output of every --json.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// apiTime is a time as the API shows it: UTC RFC 3339, whole seconds.
func apiTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// apiTimePtr is apiTime of an optional time (nil stays nil).
func apiTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := apiTime(*t)
	return &s
}
