// Package cmdline is what the crtx and crtxd command lines share on top of
// cobra: commands that only group others, exact positional arguments, and
// one way to tell a wrong command line (exit 2, with a hint) from a command
// that failed.
package cmdline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes: 0 done, 1 the command failed, 2 it was not understood, 130 it
// was interrupted (as shells report Ctrl-C).
const (
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// UsageError is a wrong command line that a command finds itself.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Group makes cmd a command that only holds subs. Alone, or with a name it
// does not have, it is a usage error: a script that misspelt a command must
// fail, where cobra would print the help and exit 0.
func Group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() && c.Name() != "help" && c.Name() != "completion" {
					names = append(names, c.Name())
				}
			}
			return &UsageError{fmt.Sprintf("missing command: %s takes one of %s", cmd.CommandPath(), strings.Join(names, ", "))}
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // cobra's default, which it sets on the root alone
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
		}
		return &UsageError{msg}
	}
	cmd.AddCommand(subs...)
	return cmd
}

// Args demands exactly the positional arguments named.
func Args(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == len(names):
			return nil
		case len(names) == 0:
			return fmt.Errorf("%s takes no arguments; got %q", cmd.CommandPath(), args)
		}
		return fmt.Errorf("%s takes %s; got %d arguments", cmd.CommandPath(), strings.Join(names, " "), len(args))
	}
}

// Run runs the command line args on root and returns the exit code. The
// error of anything cobra refuses before a command's own code runs (an
// unknown command or flag, wrong arguments, a missing required flag), of
// prepare (which runs first, e.g. to read flags from the environment) and
// every UsageError is a usage error: it is printed with a hint and exits 2.
// Any other error goes to failed, which prints it and says the exit code.
func Run(ctx context.Context, root *cobra.Command, args []string, prepare func(*cobra.Command) error,
	stdin io.Reader, stdout, stderr io.Writer, failed func(error) int) int {
	started := false
	then := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if prepare != nil {
			if err := prepare(cmd); err != nil {
				return err
			}
		}
		// Cobra checks required flags only after this hook; a missing one
		// is a wrong command line, like a missing argument.
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return err
		}
		started = true
		if then != nil {
			return then(cmd, args)
		}
		return nil
	}
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetArgs(append([]string{}, args...)) // cobra reads os.Args when given nil
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	var ue *UsageError
	if !started || errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", root.Name(), err, cmd.CommandPath())
		return ExitUsage
	}
	return failed(err)
}
