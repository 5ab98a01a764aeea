package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"parcela"
)

func cmdToken(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"token: want 'create', 'list' or 'revoke'"}
	}
	switch args[0] {
	case "create":
		return tokenCreate(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return tokenList(ctx, args[1:], getenv, stdout, stderr)
	case "revoke":
		return tokenRevoke(ctx, args[1:], getenv, stdout, stderr)
	}
	if isHelp(args[0]) {
		return subcommandsHelp("token", "create", "list", "revoke")
	}
	return usageError{fmt.Sprintf("token: unknown subcommand %q", args[0])}
}

func tokenCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("token create", stderr)
	company := fs.String("company", "", "company id (required)")
	envName := fs.String("environment", "", "sandbox or production (required)")
	asJSON := fs.Bool("json", false, "print {id, token} as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *company == "" {
		return usageError{"token create: --company is required"}
	}
	env, err := parcela.ParseEnvironment(*envName)
	if err != nil {
		return usageError{"token create: --environment must be sandbox or production"}
	}
	db, err := openExistingDB(ctx, *dbFlag, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	t, plain, err := db.CreateToken(ctx, parcela.LowerUUID(*company), env)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"id": t.ID, "token": plain, "environment": string(env), "company_id": t.CompanyID})
	}
	fmt.Fprintf(stdout, "token %s (%s): %s\nIt is shown only now; store it safely.\n", t.ID, env, plain)
	return nil
}

func tokenList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("token list", stderr)
	company := fs.String("company", "", "company id (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *company == "" {
		return usageError{"token list: --company is required"}
	}
	db, err := openExistingDB(ctx, *dbFlag, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	// A company that is not there has no tokens to list: said, as token
	// create says it, not an empty table read as "none".
	*company = parcela.LowerUUID(*company)
	if _, err := db.Company(ctx, *company); err != nil {
		return err
	}
	ts, err := db.Tokens(ctx, *company)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tENVIRONMENT\tPREFIX\tCREATED\tREVOKED")
	for _, t := range ts {
		revoked := "-"
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\n", t.ID, t.Environment, t.Prefix, t.CreatedAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

func tokenRevoke(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbFlag := newFlags("token revoke", stderr)
	fs.Init("parcela token revoke ID", flag.ContinueOnError)
	if wantsHelp(args) {
		return flagHelp(fs)
	}
	// The id is positional, before or after the flags: parcela token
	// revoke ID [--database …], or --database … ID as every other command
	// takes its flags first.
	var id string
	all := args
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		id, args = args[0], args[1:]
	} else if err := fs.Parse(args); err != nil {
		return parse(fs, args) // its error, as every command words it
	} else if fs.NArg() > 0 {
		id, args = fs.Arg(0), fs.Args()[1:]
	} else {
		args = nil
	}
	if i := slices.Index(all, id); id != "" && i >= 0 {
		// Flags on both sides of the id are one command line: a flag given
		// on each, or twice before it, was taken as the last one (a
		// review; a token "revoked" in another database).
		if name := givenTwice(fs, slices.Delete(slices.Clone(all), i, i+1)); name != "" {
			return usageError{fmt.Sprintf("%s: --%s given twice", fs.Name(), name)}
		}
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if id == "" {
		return usageError{"token revoke: want a token id"}
	}
	id = parcela.LowerUUID(id) // as the API reads ids: in capitals it was "not found", the token left live (an audit)
	db, err := openExistingDB(ctx, *dbFlag, getenv)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RevokeToken(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "token %s revoked\n", id)
	return nil
}
