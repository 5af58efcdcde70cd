// Command streamd keeps an adaptive fixed-size LS-SVM forecaster per time
// series current as samples arrive, and publishes multi-step forecasts with
// error bars. See `streamd help`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal stops the command gracefully (the daemon
		// publishes and commits what it processed, within its shutdown
		// limit); a second one, while that runs, exits at once: the records
		// not committed are read again at the next start.
		<-ctx.Done()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM) // before stop: the default action (death by the signal) never returns between them
		stop()
		<-again
		fmt.Fprintln(os.Stderr, "streamd: second signal: exiting without finishing the shutdown")
		os.Exit(1)
	}()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

// command is a subcommand: Run gets the arguments after its name.
type command interface {
	Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order of the usage text.
var commands = []struct {
	name, summary string
	cmd           func() command
}{
	{"demo", "the whole daemon path on an in-process broker with replayed series", func() command { return demoCommand{} }},
	{"run", "run the daemon: Kafka in, forecasts out", func() command { return runCommand{} }},
	{"backtest", "run a file through the Learner and score its forecasts", func() command { return &backtestCommand{} }},
	{"generate", "write a synthetic benchmark series (Mackey–Glass, Lorenz, Chua, sinc, a control loop) as CSV", func() command { return generateCommand{} }},
	{"version", "print the version", func() command { return versionCommand{} }},
}

// run runs the subcommand named by args[0].
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stderr)
		return usageErrorf("no command given")
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.cmd().Run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	printUsage(stderr)
	return usageErrorf("unknown command %q", args[0])
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "streamd keeps a nonlinear forecaster per time series current as samples stream in.\n\n")
	fmt.Fprintf(w, "Usage:\n\n\tstreamd <command> [flags]\n\nCommands:\n\n")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'streamd <command> -h' for a command's flags.\n")
}

// usageError is a mistake in the command line: exit status 2. reported means
// the message was already printed (by the flag package).
type usageError struct {
	msg      string
	reported bool
}

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCode reports err on stderr and returns the process exit status: 0 on
// success (and for -h), 2 for a usage error, 1 for any other error.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		if !ue.reported {
			fmt.Fprintf(stderr, "streamd: %v\n", err)
		}
		return 2
	}
	fmt.Fprintf(stderr, "streamd: %v\n", err)
	return 1
}

// parseFlags parses args into fs, turning a parse error into a usage error
// (the flag package has already printed it and the flag list).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{msg: err.Error(), reported: true}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
