package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// defaultURL is the sign-in URL fakelogin shows unless -url names another,
// shaped like the CLI's.
const defaultURL = "https://claude.com/cai/oauth/authorize?code=true&client_id=9d1c250a-e61b-44d9-88ed-5944d1962f5e&response_type=code" +
	"&redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth%2Fcode%2Fcallback&scope=user%3Ainference" +
	"&code_challenge=fakeChallenge0123456789abcdefghijklmnopqrstu&code_challenge_method=S256&state=fakeState0123456789abcdefghijklmnopqrstuvw"

// defaultToken is the long-lived token -style setup-token prints for the
// good code unless -token names another; made up.
const defaultToken = "sk-ant-oat01-FAKEfakeFAKEfake0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-0123456789abcdefAA"

func main() {
	style := flag.String("style", "login", "login (claude auth login) or setup-token")
	good := flag.String("code", "good-code#good-state", "the code that succeeds ($FAKELOGIN_CODE wins, to keep it off the command line)")
	dieAfterURL := flag.Bool("die-after-url", false, "SIGKILL itself once the URL and prompt are shown")
	exitEarly := flag.Int("exit-before-url", -1, "exit with this status before showing anything (after a line on stderr)")
	linger := flag.Bool("linger", false, "after success, wait instead of exiting")
	url := flag.String("url", defaultURL, "the sign-in URL to show")
	token := flag.String("token", defaultToken, "the token setup-token prints ($FAKELOGIN_TOKEN wins)")
	flag.Parse()
	if v := os.Getenv("FAKELOGIN_CODE"); v != "" {
		*good = v
	}
	if v := os.Getenv("FAKELOGIN_TOKEN"); v != "" {
		*token = v
	}

	if *exitEarly >= 0 {
		fmt.Fprintln(os.Stderr, "Error: this build cannot log in")
		os.Exit(*exitEarly)
	}
	tty := isTerminal(0) && isTerminal(1)
	if *style == "setup-token" && !tty {
		// The real one prints nothing and waits; a fake that hangs would only
		// slow the tests that check this, so it says so and fails.
		fmt.Fprintln(os.Stderr, "setup-token needs a terminal")
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	if *style == "setup-token" {
		setupTokenScreen(out, *url)
	} else {
		loginScreen(out, *url, tty)
	}
	out.Flush()
	if *dieAfterURL {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	}
	code, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "Input ended before a code was pasted. Sign in again and paste the code shown.")
		os.Exit(130)
	}
	code = strings.TrimRight(code, "\r\n")
	nl := "\n"
	if tty {
		nl = "\r\n"
	}
	if *style == "setup-token" {
		if code != *good {
			fmt.Fprint(os.Stdout, "\x1b[1A\x1b[2K\x1b[38;5;211m\u2718\x1b[4GOAuth error: Invalid authorization code.\x1b[39m"+nl+nl+
				"\x1b[2GPress\x1b[8G\x1b[1mEnter\x1b[22m to\x1b[17Gretry"+nl)
			waitForever() // for Enter, which no relay sends
		}
		fmt.Fprint(os.Stdout, "\x1b[2G\u2713 Long-lived authentication token created successfully!"+nl+nl+
			"\x1b[2GYour OAuth token (valid for 1 year):"+nl+nl+"\x1b[2G"+*token+nl+nl+
			"\x1b[2GStore this token securely. You won't be able to see it again."+nl+nl+
			"\x1b[2GUse this token by setting: export CLAUDE_CODE_OAUTH_TOKEN=<token>"+nl)
	} else {
		fmt.Fprint(os.Stdout, "Signing in\u2026"+nl)
		if code != *good {
			fmt.Fprint(os.Stderr, "Couldn't log in: Invalid authorization code"+nl)
			os.Exit(1)
		}
		fmt.Fprint(os.Stdout, "Login successful."+nl)
	}
	if *linger {
		waitForever()
	}
}

// waitForever sleeps (a bare select{} would be a deadlock to the runtime).
func waitForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// loginScreen is what `claude auth login` prints before it reads the code.
func loginScreen(out *bufio.Writer, url string, tty bool) {
	if !tty {
		fmt.Fprint(out, "Opening browser to sign in\u2026\nIf the browser didn't open, visit: "+url+"\nPaste code here if prompted > ")
		return
	}
	fmt.Fprint(out, "Opening browser to sign in\u2026\r\nIf the browser didn't open, visit: \x1b]8;;"+url+"\x07\x1b[94m"+url+
		"\x1b[39m\x1b]8;;\x07\r\nPaste code here if prompted > ")
}

// setupTokenScreen is what `claude setup-token` draws before it reads the
// code: words placed by column moves, the URL as a hyperlink whose visible
// text is cut into lines, queries to the terminal that get no answer.
func setupTokenScreen(out *bufio.Writer, url string) {
	fmt.Fprint(out, "\x1b7\x1b[r\x1b8\x1b[?25h\x1b[?25l\x1b[?2004hWelcome\x1b[9Gto\x1b[12GClaude\x1b[19GCode\r\r\n\r\r\n"+
		"\x1b]11;?\x07\x1b[c\x1b[2GBrowser\x1b[10Gdidn't\x1b[17Gopen?\x1b[23GUse\x1b[27Gthe\x1b[31GURL\x1b[35Gbelow\r\r\n\r\r\n")
	for i := 0; i < len(url); i += 80 {
		fmt.Fprintf(out, "\x1b]8;id=fake;%s\x07\x1b[38;5;246m%s\x1b[39m\x1b]8;;\x07\r\r\n", url, url[i:min(i+80, len(url))])
	}
	fmt.Fprint(out, "\r\r\n\x1b[2GPaste\x1b[8Gcode\x1b[13Ghere\x1b[18Gif\x1b[21Gprompted\r\r\n\x1b[3C\x1b[2A\x1b[>0q\x1b[?u\x1b[c")
}

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
