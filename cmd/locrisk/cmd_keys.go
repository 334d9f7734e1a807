package main

// `locrisk keys create`, `keys list` and `keys revoke`.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locrisk/locrisk"
)

func (c *cli) keysCreate(args []string) error {
	var account, name, scopes, expires, allowIP, db string
	var version int
	var asJSON bool
	f := c.newFlags("keys create", "--account ACCOUNT_ID --scopes s1,s2 [flags]", `
Creates an API key and prints its secret (lrk_...) alone on stdout, or
{"id", "key", "accountId", "name", "scopes"} with --json. The secret is
stored only as a hash: this is the one time it is shown. A running server
accepts the key within a second. --name labels the key for 'keys list' (at
most `+strconv.Itoa(locrisk.MaxKeyNameLen)+` characters, no control characters).

Scopes: `+strings.Join(locrisk.AllScopes(), ", ")+`.
--scope-version 1 marks a key from before usage:read existed: its
reports:read also opens the usage endpoints.`, `
  locrisk keys create --account acct_... --scopes reports:create,reports:read,reports:pdf --name "CI pipeline"
  locrisk keys create --account acct_... --scopes usage:read --expires-in 720h --json
  locrisk keys create --account acct_... --scopes reports:read --allow-ip 203.0.113.0/24,2001:db8::/32
  locrisk keys create --account acct_... --scopes reports:read --scope-version 1`)
	f.StringVar(&account, "account", "", "owning account `id` (required)")
	f.StringVar(&scopes, "scopes", "", "comma-separated `scopes` (required)")
	f.StringVar(&name, "name", "", "a `label` for the key, shown by 'keys list'")
	f.StringVar(&expires, "expires-in", "", "lifetime as a `duration` (720h, 90m; also 30d); default never expires")
	f.StringVar(&allowIP, "allow-ip", "", "comma-separated `CIDRs` or addresses the key may be used from; default any")
	f.IntVar(&version, "scope-version", locrisk.ScopeVersionCurrent, "scope version: 2 (current) or 1 (legacy)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if account == "" {
		return usagef("--account is required")
	}
	if err := locrisk.CheckKeyName(name); err != nil {
		return usagef("--name: %v", err)
	}
	var scopeList []string
	for _, s := range strings.Split(scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			scopeList = append(scopeList, s)
		}
	}
	if len(scopeList) == 0 {
		return usagef("--scopes is required (one or more of %s)", strings.Join(locrisk.AllScopes(), ", "))
	}
	for _, s := range scopeList {
		if !locrisk.ValidScope(s) {
			return usagef("unknown scope %q (known: %s)", s, strings.Join(locrisk.AllScopes(), ", "))
		}
	}
	if version != locrisk.ScopeVersionLegacy && version != locrisk.ScopeVersionCurrent {
		return usagef("--scope-version must be 1 or 2, got %d", version)
	}
	var lifetime time.Duration
	if expires != "" {
		var err error
		if lifetime, err = parseLifetime(expires); err != nil {
			return usagef("--expires-in: %v", err)
		}
	}
	cidrs, err := locrisk.ParseCIDRs(allowIP)
	if err != nil {
		return usagef("--allow-ip: %v", err)
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	k, secret, err := st.CreateKey(c.ctx, locrisk.NewKey{AccountID: account, Name: name, Scopes: scopeList, ScopeVersion: version, AllowedCIDRs: cidrs, ExpiresIn: lifetime})
	if errors.Is(err, locrisk.ErrNotFound) {
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
			Name      string   `json:"name"`
			Scopes    []string `json:"scopes"`
		}{k.ID, secret, k.AccountID, k.Name, k.Scopes})
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
	Name         string   `json:"name"`
	SecretHint   string   `json:"secretHint"`
	Scopes       []string `json:"scopes"`
	ScopeVersion int      `json:"scopeVersion"`
	AllowedCIDRs []string `json:"allowedCidrs"`
	CreatedUTC   string   `json:"createdUtc"`
	ExpiresUTC   *string  `json:"expiresUtc"`
	RevokedUTC   *string  `json:"revokedUtc"`
	LastUsedUTC  *string  `json:"lastUsedUtc"`
}

func (c *cli) keysList(args []string) error {
	var account, db string
	var asJSON bool
	f := c.newFlags("keys list", "[--account ACCOUNT_ID] [--json]", `
Lists API keys, oldest first: id, account, name, scopes, secret hint (the
first characters of the secret, to recognise it), and creation, last use,
expiry and revocation times (UTC). Secrets are never stored, so never shown.

The last use is to the minute: a running server notes a key's use at most
once a minute and writes it with its request statistics (within a second,
and at a graceful stop), so it may be up to a minute older than the latest
request. "-" (null in JSON) means not used since the server recorded uses.`, `
  locrisk keys list
  locrisk keys list --account acct_... --json`)
	f.StringVar(&account, "account", "", "only this account's keys")
	f.BoolVar(&asJSON, "json", false, "print a JSON array")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
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
			out = append(out, keyJSON{ID: k.ID, AccountID: k.AccountID, Name: k.Name, SecretHint: k.SecretHint, Scopes: k.Scopes,
				ScopeVersion: k.ScopeVersion, AllowedCIDRs: cidrs, CreatedUTC: apiTime(k.CreatedUTC),
				ExpiresUTC: apiTimePtr(k.ExpiresUTC), RevokedUTC: apiTimePtr(k.RevokedUTC), LastUsedUTC: apiTimePtr(k.LastUsedUTC)})
		}
		return writeJSON(c.stdout, out)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tNAME\tSCOPES\tHINT\tCREATED\tLAST-USED\tEXPIRES\tREVOKED\tALLOW-IP")
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
		if k.ScopeVersion == locrisk.ScopeVersionLegacy {
			scopes += " (v1)"
		}
		name := "-"
		if k.Name != "" {
			name = strconv.Quote(k.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s...\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.AccountID, name, scopes, k.SecretHint,
			apiTime(k.CreatedUTC), orDash(apiTimePtr(k.LastUsedUTC)), orDash(apiTimePtr(k.ExpiresUTC)), orDash(apiTimePtr(k.RevokedUTC)), allow)
	}
	return tw.Flush()
}

func (c *cli) keysRevoke(args []string) error {
	var db string
	f := c.newFlags("keys revoke", "KEY_ID", `
Revokes an API key (key_..., as 'keys list' shows it). A running server
refuses it within a second. Revoking a revoked key changes nothing.`, `
  locrisk keys revoke key_...`)
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one KEY_ID, got %s", plural(len(pos), "argument"))
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.RevokeKey(c.ctx, pos[0]); errors.Is(err, locrisk.ErrNotFound) {
		return fmt.Errorf("key %s not found", pos[0])
	} else if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "revoked %s\n", pos[0])
	return err
}
