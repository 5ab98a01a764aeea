// Command parcela serves the parcela API and administers its database.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"parcela"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first signal stops gracefully; a second is the operator
		// insisting, and gets the signal's default action back: the
		// process ends at once, as a kill would, which loses no answered
		// request. Caught, it waited out PARCELA_SHUTDOWN_TIMEOUT.
		<-ctx.Done()
		stop()
	}()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "parcela:", errorLine(err))
		stop()
		os.Exit(exitCode(err))
	}
}

// usageError is a mistake in the command line (exit 2, like flag's).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func exitCode(err error) int {
	if _, ok := err.(usageError); ok {
		return 2
	}
	return 1
}

const usage = `usage: parcela <command> [flags]

commands:
  serve [--demo]        apply migrations and serve production, sandbox and operations listeners
  migrate               apply migrations and exit
  company create|list   manage companies
  token create|list|revoke
                        manage access tokens
  demo [--json]         create the demo company, product, offer and sandbox token

Every command reads PARCELA_DATABASE_URL or --database (a file path or sqlite:PATH,
default parcela.db; or postgres://...).`

// run is the whole program; main only wires the process to it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := runCommand(ctx, args, getenv, stdout, stderr)
	if h, ok := errors.AsType[helpShown](err); ok {
		fmt.Fprint(stdout, h.text)
		return nil
	}
	return err
}

// runCommand runs the command args name.
func runCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return usageError{"no command given"}
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return cmdMigrate(ctx, args[1:], getenv, stdout, stderr)
	case "company":
		return cmdCompany(ctx, args[1:], getenv, stdout, stderr)
	case "token":
		return cmdToken(ctx, args[1:], getenv, stdout, stderr)
	case "demo":
		return cmdDemo(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// errorLine is the one line shown for a failed command.
func errorLine(err error) string {
	if e, ok := errors.AsType[*parcela.Error](err); ok {
		return e.Message
	}
	// Drivers report multi-address failures over several lines.
	return strings.Join(strings.Fields(err.Error()), " ")
}
