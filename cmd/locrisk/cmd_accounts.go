package main

// `locrisk accounts create`, `accounts list`, `accounts update`,
// `accounts disable` and `accounts enable`.

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/locrisk/locrisk"
)

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
	f.IntVar(&quota, "monthly-quota", locrisk.DefaultMonthlyQuota, "report jobs per calendar month")
	f.IntVar(&rate, "rate-limit", locrisk.DefaultRateLimit, "API requests per minute")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
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
	st, err := c.openStore(db, storeUse{})
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

// accountJSON is an account as `accounts list --json` and `accounts update
// --json` show it.
type accountJSON struct {
	ID                 string  `json:"id"`
	Name               string  `json:"name"`
	MonthlyQuota       int     `json:"monthlyQuota"`
	RateLimitPerMinute int     `json:"rateLimitPerMinute"`
	Status             string  `json:"status"` // enabled or disabled
	CreatedUTC         string  `json:"createdUtc"`
	DisabledUTC        *string `json:"disabledUtc"`
}

func toAccountJSON(a locrisk.Account) accountJSON {
	return accountJSON{ID: a.ID, Name: a.Name, MonthlyQuota: a.MonthlyQuota, RateLimitPerMinute: a.RateLimitPerMinute,
		Status: accountStatus(a), CreatedUTC: apiTime(a.CreatedUTC), DisabledUTC: apiTimePtr(a.DisabledUTC)}
}

func accountStatus(a locrisk.Account) string {
	if a.Disabled() {
		return "disabled"
	}
	return "enabled"
}

// writeAccounts prints accounts as a table, or as a JSON array.
func (c *cli) writeAccounts(accounts []locrisk.Account, asJSON bool) error {
	if asJSON {
		out := make([]accountJSON, 0, len(accounts))
		for _, a := range accounts {
			out = append(out, toAccountJSON(a))
		}
		return writeJSON(c.stdout, out)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tQUOTA/MONTH\tRATE/MIN\tSTATUS\tCREATED")
	for _, a := range accounts {
		status := accountStatus(a)
		if a.DisabledUTC != nil {
			status += " since " + apiTime(*a.DisabledUTC)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", a.ID, strconv.Quote(a.Name), a.MonthlyQuota, a.RateLimitPerMinute,
			status, apiTime(a.CreatedUTC))
	}
	return tw.Flush()
}

func (c *cli) accountsList(args []string) error {
	var db string
	var asJSON bool
	f := c.newFlags("accounts list", "[--json]", `
Lists the accounts, oldest first: id, name, monthly report job quota, rate
limit (API requests per minute), status (enabled, or disabled and since
when) and creation time (UTC).`, `
  locrisk accounts list
  locrisk accounts list --json`)
	f.BoolVar(&asJSON, "json", false, "print a JSON array")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	st, err := c.openStore(db, storeUse{})
	if err != nil {
		return err
	}
	defer st.Close()
	accounts, err := st.ListAccounts(c.ctx)
	if err != nil {
		return err
	}
	return c.writeAccounts(accounts, asJSON)
}

func (c *cli) accountsUpdate(args []string) error {
	var name, db string
	var quota, rate int
	var asJSON bool
	f := c.newFlags("accounts update", "ACCOUNT_ID [--name NAME] [--monthly-quota N] [--rate-limit N]", `
Changes an account's name, monthly report job quota or rate limit (API
requests per minute); what is not given stays. Prints the account as
'accounts list' does. A running server applies a new quota to the next
report job at once and a new rate limit within a second.`, `
  locrisk accounts update acct_... --monthly-quota 5000
  locrisk accounts update acct_... --rate-limit 120 --name "Acme Insurance (EU)" --json`)
	f.StringVar(&name, "name", "", "new account `name`")
	f.IntVar(&quota, "monthly-quota", 0, "new quota: report jobs per calendar month")
	f.IntVar(&rate, "rate-limit", 0, "new limit: API requests per minute")
	f.BoolVar(&asJSON, "json", false, "print the account as JSON")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one ACCOUNT_ID, got %s", plural(len(pos), "argument"))
	}
	var u locrisk.AccountUpdate
	f.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "name":
			u.Name = &name
		case "monthly-quota":
			u.MonthlyQuota = &quota
		case "rate-limit":
			u.RateLimit = &rate
		}
	})
	switch {
	case u.Name == nil && u.MonthlyQuota == nil && u.RateLimit == nil:
		return usagef("nothing to change: give --name, --monthly-quota or --rate-limit")
	case u.Name != nil && strings.TrimSpace(name) == "":
		return usagef("--name must not be empty")
	case u.MonthlyQuota != nil && quota < 0:
		return usagef("--monthly-quota must be 0 or more, got %d", quota)
	case u.RateLimit != nil && rate < 1:
		return usagef("--rate-limit must be at least 1, got %d", rate)
	}
	st, err := c.openStore(db, storeUse{})
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := st.UpdateAccount(c.ctx, pos[0], u)
	if errors.Is(err, locrisk.ErrNotFound) {
		return fmt.Errorf("account %s not found", pos[0])
	}
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, toAccountJSON(a))
	}
	return c.writeAccounts([]locrisk.Account{a}, false)
}

func (c *cli) accountsDisable(args []string) error { return c.setAccountDisabled("disable", args) }
func (c *cli) accountsEnable(args []string) error  { return c.setAccountDisabled("enable", args) }

// setAccountDisabled is `accounts disable` and `accounts enable`.
func (c *cli) setAccountDisabled(verb string, args []string) error {
	about := `
Disables an account: a running server refuses its keys within a second,
with the same 401 invalid_api_key as a revoked key. Its jobs, reports and
keys are kept; 'accounts enable' lets the keys in again. Disabling a
disabled account changes nothing.`
	if verb == "enable" {
		about = `
Enables a disabled account again: a running server accepts its keys
(those not revoked or expired) within a second. Enabling an enabled
account changes nothing.`
	}
	var db string
	f := c.newFlags("accounts "+verb, "ACCOUNT_ID", about, "  locrisk accounts "+verb+" acct_...")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one ACCOUNT_ID, got %s", plural(len(pos), "argument"))
	}
	st, err := c.openStore(db, storeUse{})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.SetAccountDisabled(c.ctx, pos[0], verb == "disable"); errors.Is(err, locrisk.ErrNotFound) {
		return fmt.Errorf("account %s not found", pos[0])
	} else if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%sd %s\n", verb, pos[0])
	return err
}
