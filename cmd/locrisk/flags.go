package main

// The flag framework every command uses: a FlagSet per command with its
// help text, flags before or after positional arguments, and the
// environment (LOCRISK_<FLAG>) for flags the command line does not give.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

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
	fmt.Fprintf(w, "Usage:\n  locrisk %s %s\n\n%s\n", f.path, f.synopsis, strings.TrimSpace(f.about))
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags (each also read from the environment variable shown):\n")
	}
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
	if err == nil && f.c.parseOnly {
		return pos, errParsed
	}
	return pos, err
}

// parseNoArgs parses a command that takes flags only.
func (f *flags) parseNoArgs(args []string) error {
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	return noArgs(pos)
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(pos []string) error {
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

// positionalsLast moves the positional arguments behind a "--", so that a
// negative coordinate ("-87.63") is not taken for a flag. Flags that take
// a value keep it; an unknown flag is left for the parser to report.
func positionalsLast(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if isNumbers(a) || !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		fl := fs.Lookup(name)
		if fl == nil {
			continue
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(append(flags, "--"), pos...)
}

// isNumbers reports whether a is a number or numbers separated by commas
// ("-87.63", "-33.9,151.2"): a positional argument, never a flag.
func isNumbers(a string) bool {
	for part := range strings.SplitSeq(a, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if _, err := strconv.ParseFloat(part, 64); err != nil {
			return false
		}
	}
	return strings.TrimSpace(strings.ReplaceAll(a, ",", "")) != ""
}
