package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

const usage = `usage:
  untether [run] [--config FILE]            run the daemon (default command)
  untether check [--config FILE] [--online] validate the config and the environment
  untether version                          print version information
  untether help [COMMAND]                   print this help (also -h or --help, after any command)

--config defaults to $UNTETHER_CONFIG, then ~/.config/untether/untether.toml.
`

// parseFlags parses a subcommand's arguments. The flag package's own
// reaction to -h (printing "Usage of run:" with the flags alone, on
// stderr, exit 2) is replaced: help prints the overall usage and this
// command's flags on stdout, and parseFlags returns exitOK; a wrong flag or
// a stray argument prints the flag package's complaint and the same usage
// on stderr and returns exitUsage. ok is true when the command should run.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	var complaint bytes.Buffer
	fs.SetOutput(&complaint)
	fs.Usage = func() {} // printed below, to the right stream
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout, fs)
		return exitOK, false
	case err != nil:
		fmt.Fprintf(stderr, "untether %s: %s\n\n", fs.Name(), strings.TrimSpace(complaint.String()))
		printUsage(stderr, fs)
		return exitUsage, false
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "untether %s: unexpected argument %q\n\n", fs.Name(), fs.Arg(0))
		printUsage(stderr, fs)
		return exitUsage, false
	}
	return exitOK, true
}

// printUsage writes the overall usage, then the flags of fs's command.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, usage)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintf(w, "\nuntether %s takes no flags.\n", fs.Name())
		return
	}
	fmt.Fprintf(w, "\nflags of untether %s:\n", fs.Name())
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// runHelp is `untether help [COMMAND]`: the usage, or what COMMAND --help
// prints (each command declares its own flags, so it is asked).
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0, len(args) == 1 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help"):
		fmt.Fprint(stdout, usage)
		return exitOK
	case len(args) > 1 || strings.HasPrefix(args[0], "-"):
		fmt.Fprintf(stderr, "untether help: want one command (run, check or version), got %q\n\n%s", args, usage)
		return exitUsage
	}
	return run([]string{args[0], "--help"}, stdout, stderr)
}
