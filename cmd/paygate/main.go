// Command paygate is the command-line tool of the paygate SDK.
//
// Usage:
//
//	paygate <command> [subcommand] [flags] [arguments]
//
// Commands:
//
//	webhook validate FILE...   check webhook batch files against spec B1-B3
//
// Exit status: 0 success; 1 the input is invalid (a batch with problems); 2
// usage or I/O error. Every command accepts -h.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

// env is what a command reads and writes, so that tests can run it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand.
type command struct {
	name, summary string
	run           func(e env, args []string) int
}

// commands lists the top-level commands and their subcommands.
func commands() []command {
	return []command{
		{"webhook", "bank webhook batches: validate", runWebhook},
	}
}

// run dispatches args to a command and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := env{stdin, stdout, stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "paygate: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

// usage prints the command list.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: paygate <command> [subcommand] [flags] [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nexit status: 0 ok, 1 invalid input, 2 usage or I/O error; -h on any command for its flags")
}
