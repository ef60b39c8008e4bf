package handoff

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Account is a local user account, as the password database has it.
type Account struct {
	// Name is the login name; "" when the database has no entry for UID.
	Name string
	UID  int
	// Home and Shell are the database's home directory and login shell;
	// "" when unknown.
	Home  string
	Shell string
}

// FirstUserUID is the lowest UID of a person's account: the default
// UID_MIN of Debian's, Fedora's and Arch's login.defs. Below it are root
// and the system accounts services run as.
const FirstUserUID = 1000

// ServiceUser is the account deploy/systemd/untether.service runs as.
const ServiceUser = "untether"

// Service reports whether a is an account services run as rather than a
// person's: a system UID (1 up to FirstUserUID), a login shell that refuses
// logins (nologin, false), or ServiceUser. Root is not one by itself: a
// daemon run as root on a machine where root owns the project is most
// likely resumed by root too (often in a container without sudo).
func (a Account) Service() bool {
	switch filepath.Base(a.Shell) {
	case "nologin", "false":
		return true
	}
	return a.UID > 0 && a.UID < FirstUserUID || a.Name == ServiceUser
}

// SwitchTo is the account a person at a terminal must become to resume the
// daemon's sessions there, or nil when they need not. untether cannot know
// who will paste the line, so it assumes the person who owns the project
// directory: when the daemon runs as another account, or as a service
// account (which no person logs in as), the line first becomes the
// daemon's account. owner is the project directory's owner.
func SwitchTo(daemon, owner Account) *Account {
	if daemon.UID != owner.UID || daemon.Service() {
		return &daemon
	}
	return nil
}

// sudoUser is a's name for sudo -u, or #uid when it has none.
func (a Account) sudoUser() string {
	if a.Name != "" {
		return a.Name
	}
	return "#" + strconv.Itoa(a.UID)
}

// LocalAccounts returns the account this process runs as (its effective
// UID) and the account that owns dir, from the system's password database
// (os/user for names and homes; login shells from /etc/passwd, as os/user
// has none: a shell stays "" for an account only a network directory
// knows). An owner without a database entry is returned by UID alone.
func LocalAccounts(dir string) (daemon, owner Account, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return Account{}, Account{}, fmt.Errorf("find the owner of the project directory: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return Account{}, Account{}, fmt.Errorf("find the owner of %s: no owner in its file information", dir)
	}
	shells := passwdShells("/etc/passwd")
	if daemon, err = lookupAccount(os.Geteuid(), shells); err != nil {
		return Account{}, Account{}, fmt.Errorf("look up the daemon's own account: %w", err)
	}
	if owner, err = lookupAccount(int(sys.Uid), shells); err != nil {
		return Account{}, Account{}, fmt.Errorf("look up the owner of %s: %w", dir, err)
	}
	return daemon, owner, nil
}

// lookupAccount is uid's Account; an unknown uid is no error.
func lookupAccount(uid int, shells map[int]string) (Account, error) {
	a := Account{UID: uid, Shell: shells[uid]}
	u, err := user.LookupId(strconv.Itoa(uid))
	var unknown user.UnknownUserIdError
	switch {
	case errors.As(err, &unknown):
		return a, nil
	case err != nil:
		return Account{}, fmt.Errorf("look up uid %d: %w", uid, err)
	}
	a.Name, a.Home = u.Username, u.HomeDir
	return a, nil
}

// passwdShells reads the login shells of the accounts in a passwd file,
// by UID (the first entry of a UID wins, as getpwuid finds it). An
// unreadable file gives none.
func passwdShells(path string) map[int]string {
	shells := map[int]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return shells
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// name:password:uid:gid:gecos:home:shell
		f := bytes.Split(sc.Bytes(), []byte(":"))
		if len(f) != 7 {
			continue
		}
		uid, err := strconv.Atoi(string(f[2]))
		if _, seen := shells[uid]; err != nil || seen {
			continue
		}
		shells[uid] = string(f[6])
	}
	return shells
}
