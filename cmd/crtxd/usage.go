package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// failure is an error of a command that ran (exit 1), as against one that
// was not understood (exit 2): everything cobra refuses before a command
// runs (an unknown command or flag, a wrong number of arguments, a
// missing required flag, a bad CRTX_ variable) is a usage error.
type failure struct{ err error }

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// usageError is a usage error a command finds itself; markFailures
// leaves it one.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

// markFailures wraps the RunE of cmd and of every command under it, so
// their errors are failures.
func markFailures(cmd *cobra.Command) {
	if runE := cmd.RunE; runE != nil {
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			err := runE(cmd, args)
			var u *usageError
			if err == nil || errors.As(err, &u) {
				return err
			}
			return &failure{err}
		}
	}
	for _, c := range cmd.Commands() {
		markFailures(c)
	}
}

// needsCommand runs a command that only groups others: it was given none,
// or one it does not have. cobra would print the help and exit 0 for a
// command it cannot run; a script that misspelt a command must fail.
func needsCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() && c.Name() != "help" && c.Name() != "completion" {
				names = append(names, c.Name())
			}
		}
		return &usageError{fmt.Errorf("missing command: %s takes one of %s", cmd.CommandPath(), strings.Join(names, ", "))}
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only on the root
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return &usageError{errors.New(msg)}
}

// positional wants exactly the arguments named, for the usage error.
func positional(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == len(names) {
			return nil
		}
		if len(names) == 0 {
			return fmt.Errorf("%s takes no arguments; got %q", cmd.CommandPath(), args)
		}
		return fmt.Errorf("%s takes %s; got %d arguments", cmd.CommandPath(), strings.Join(names, " "), len(args))
	}
}
