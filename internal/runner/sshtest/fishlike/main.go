package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	cmds, err := parse(os.Getenv("SSH_ORIGINAL_COMMAND"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fishlike:", err)
		os.Exit(127)
	}
	os.Exit(run(cmds))
}

// command is one parsed command: its words, or why it is not run.
type command struct {
	argv []string
	err  error
}

// run runs the commands in turn on this process's stdio and returns the
// last one's exit status.
func run(cmds []command) int {
	status := 0
	for _, c := range cmds {
		argv := c.argv
		if c.err != nil {
			fmt.Fprintln(os.Stderr, "fishlike:", c.err)
			status = 127
			continue
		}
		path, err := exec.LookPath(argv[0])
		if err != nil {
			fmt.Fprintf(os.Stderr, "fishlike: Unknown command: %s\n", argv[0])
			status = 127
			continue
		}
		cmd := exec.Command(path, argv[1:]...)
		cmd.Args[0] = argv[0]
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		err = cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			status = exit.ExitCode()
		case err != nil:
			fmt.Fprintln(os.Stderr, "fishlike:", err)
			status = 126
		default:
			status = 0
		}
	}
	return status
}

// unsupported are the characters that, unquoted, start an expansion,
// a pipe or a redirection in fish.
const unsupported = "$*?{}()|&<>^"

// parse splits line into commands of words by fish's rules. An unclosed
// quote is an error of the whole line (fish runs nothing then).
func parse(line string) ([]command, error) {
	var (
		cmds    []command
		words   []string
		bad     error
		word    strings.Builder
		inWord  bool
		endWord = func() {
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		}
		endCmd = func() {
			endWord()
			if len(words) > 0 {
				cmds = append(cmds, command{argv: words, err: bad})
			}
			words, bad = nil, nil
		}
	)
	r := []rune(line)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n' || c == ';':
			endCmd()
		case c == '#' && !inWord:
			for i < len(r) && r[i] != '\n' {
				i++
			}
			endCmd()
		case c == '\'':
			inWord = true
			j, err := singleQuoted(r, i+1, &word)
			if err != nil {
				return nil, err
			}
			i = j
		case c == '"':
			inWord = true
			j, dollar, err := doubleQuoted(r, i+1, &word)
			if err != nil {
				return nil, err
			}
			if dollar && bad == nil {
				bad = fmt.Errorf("unsupported expansion in double quotes at offset %d", i)
			}
			i = j
		case c == '\\':
			if i+1 >= len(r) {
				return nil, errors.New("a backslash at the end of the line")
			}
			i++
			switch e := r[i]; e {
			case '\n': // continues the line
			case 'n':
				inWord = true
				word.WriteRune('\n')
			case 't':
				inWord = true
				word.WriteRune('\t')
			case 'r':
				inWord = true
				word.WriteRune('\r')
			default:
				inWord = true
				word.WriteRune(e)
			}
		case c == '~' && !inWord, strings.ContainsRune(unsupported, c):
			if bad == nil {
				bad = fmt.Errorf("unsupported syntax %q at offset %d", c, i)
			}
			inWord = true
			word.WriteRune(c)
		default:
			inWord = true
			word.WriteRune(c)
		}
	}
	endCmd()
	return cmds, nil
}

// singleQuoted reads a single-quoted section from r[i:] into w and returns
// the index of its closing quote. Fish's only escapes in it: \' and \\.
func singleQuoted(r []rune, i int, w *strings.Builder) (int, error) {
	for ; i < len(r); i++ {
		switch {
		case r[i] == '\\' && i+1 < len(r) && (r[i+1] == '\'' || r[i+1] == '\\'):
			i++
			w.WriteRune(r[i])
		case r[i] == '\'':
			return i, nil
		default:
			w.WriteRune(r[i])
		}
	}
	return 0, errors.New("unterminated single quote")
}

// doubleQuoted reads a double-quoted section from r[i:] into w and returns
// the index of its closing quote, and whether it holds an unescaped $ (a
// variable or command substitution, which fishlike does not implement).
// Escapes: \" \\ \$ and a backslash before a newline.
func doubleQuoted(r []rune, i int, w *strings.Builder) (end int, dollar bool, err error) {
	for ; i < len(r); i++ {
		switch {
		case r[i] == '\\' && i+1 < len(r) && strings.ContainsRune("\"\\$", r[i+1]):
			i++
			w.WriteRune(r[i])
		case r[i] == '\\' && i+1 < len(r) && r[i+1] == '\n':
			i++
		case r[i] == '"':
			return i, dollar, nil
		default:
			dollar = dollar || r[i] == '$'
			w.WriteRune(r[i])
		}
	}
	return 0, false, errors.New("unterminated double quote")
}
