package main

// `locrisk accounts create`.

import (
	"fmt"
	"strings"

	"locrisk/store"
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
