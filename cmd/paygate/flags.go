package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// newFlags makes a command's flag set that prints its usage to e.stderr.
func newFlags(e env, name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("paygate "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: paygate %s %s\n%s\n", name, args, about)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args; ok false means return status (0 for -h, 2 otherwise).
func parse(fs *flag.FlagSet, args []string) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}

// fail prints a configuration or I/O error and returns exitUsage.
func fail(e env, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "paygate: "+format+"\n", args...)
	return exitUsage
}

// envOr returns the flag value, or the variable's when the flag is empty.
func envOr(flagValue, name string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(name)
}
