package main

// `locrisk signing-keys list` and `signing-keys rotate`: the Ed25519 keys
// reports are signed with (docs/verification.md). The private key is
// sealed in the database with the server's secret key file, like the
// webhook signing secrets, so rotate needs that file; list shows public
// keys only and needs none.

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

func (c *cli) signingKeysList(args []string) error {
	var db string
	var asJSON, asPEM bool
	f := c.newFlags("signing-keys list", "[--json | --pem]", `
Lists the keys reports are signed with, newest first: id, status (current
or retired), created and retired times (UTC), and the public key (base64).
--json prints what GET /.well-known/locrisk-signing-keys serves, which
'locrisk report verify --keys FILE' reads; --pem prints each public key
as PEM, for openssl. A database that has never served a report has no key
yet: serve creates the first at start.`, `
  locrisk signing-keys list
  locrisk signing-keys list --json > keys.json
  locrisk signing-keys list --pem > key.pem`)
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	f.BoolVar(&asJSON, "json", false, "print the keys as the well-known path serves them")
	f.BoolVar(&asPEM, "pem", false, "print each public key as PEM")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	if asJSON && asPEM {
		return usagef("--json and --pem do not go together")
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	keys, err := st.ListSigningKeys(c.ctx)
	if err != nil {
		return err
	}
	v, err := view.NewSigningKeys(keys)
	if err != nil {
		return err
	}
	switch {
	case asJSON:
		return writeJSON(c.stdout, v)
	case asPEM:
		for _, k := range v.Keys {
			fmt.Fprintf(c.stdout, "# %s (%s)\n%s", k.KeyID, keyStatus(k), k.PublicKeyPEM)
		}
		return nil
	}
	if len(keys) == 0 {
		fmt.Fprintln(c.stderr, "no signing keys yet: serve creates the first when it starts")
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tCREATED\tRETIRED\tPUBLIC KEY")
	for _, k := range v.Keys {
		retired := "-"
		if k.RetiredUTC != nil {
			retired = *k.RetiredUTC
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.KeyID, keyStatus(k), k.CreatedUTC, retired, k.PublicKey)
	}
	return tw.Flush()
}

func keyStatus(k view.SigningKey) string {
	if k.RetiredUTC == nil {
		return "current"
	}
	return "retired"
}

func (c *cli) signingKeysRotate(args []string) error {
	var db, keyFile string
	f := c.newFlags("signing-keys rotate", "[--db FILE] [--secret-key-file FILE]", `
Makes a new signing key current and retires the one before it: its private
key is erased, its public key stays published, so reports signed with it
still verify. A running server signs with the new key within 2 seconds.
Prints the new key's id. The new private key is sealed with the secret key
file serve uses (--secret-key-file, by default the --db file name + ".key").`, `
  locrisk signing-keys rotate
  locrisk signing-keys rotate --db ./locrisk.db --secret-key-file ./locrisk.db.key`)
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	f.StringVar(&keyFile, "secret-key-file", "", "`file` with the key that seals secrets at rest (default: the --db file name + \".key\")")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	st, err := c.openStore(db, storeUse{mustExist: true, sealed: true, keyFile: keyFile})
	if err != nil {
		return err
	}
	defer st.Close()
	k, err := locrisk.NewSigningKey(time.Now())
	if err != nil {
		return err
	}
	if err := st.RotateSigningKey(c.ctx, k); err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, k.ID)
	return nil
}
