package runner

import (
	"sort"
	"strings"
)

// inheritedEnv are the variables of the daemon's own environment the CLI
// may see. Everything else (the bot token above all) is withheld; the
// configured env table adds what the CLI needs on top.
var inheritedEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "TERM": true, "TMPDIR": true, "TZ": true,
}

// withheldEnv are never inherited although they match a prefix above:
// they lead to the user's session bus and systemd manager, through which a
// tool could start processes outside every sandbox (systemd-run --user).
// Only the configured env table can set them, knowingly.
var withheldEnv = map[string]bool{"XDG_RUNTIME_DIR": true, "DBUS_SESSION_BUS_ADDRESS": true}

func inheritable(name string) bool {
	if withheldEnv[name] {
		return false
	}
	return inheritedEnv[name] || strings.HasPrefix(name, "LC_") || strings.HasPrefix(name, "XDG_")
}

// BuildEnv returns the CLI's environment: the allow-listed part of
// inherited, overlaid by extra. The result is sorted so it is stable in logs
// and tests.
//
// It never adds IS_SANDBOX=1, without which the CLI refuses
// bypassPermissions as root: an operator who wants that puts it in
// [claude] env knowingly (and `untether check` warns about it).
func BuildEnv(inherited []string, extra map[string]string) []string {
	vars := map[string]string{}
	for _, kv := range inherited {
		k, v, ok := strings.Cut(kv, "=")
		if ok && inheritable(k) {
			vars[k] = v
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}
