package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// reloadable is the set of keys a running daemon can apply on SIGHUP without
// restarting: they are read per turn or per update, never baked into a live
// CLI process, the poller or the database. A whole section is written as
// "section.*".
var reloadable = []string{
	"telegram.allowed_user_ids",
	"telegram.allow_any_user",
	"telegram.allowed_chat_ids",
	"telegram.group_trigger",
	"telegram.conflict_grace",
	"telegram.album_wait",
	"telegram.forward_wait",
	"telegram.default_project",
	"telegram.topic_default_project",
	"telegram.pin_panel",
	"claude.models",
	"progress.*",
	"render.*",
	// Projects are read at each spawn: a running CLI keeps its settings
	// until it next starts.
	"projects",
	"files.*",
	"state.retention",
	"voice.*",
	"claude.idle_timeout",
	"claude.approval_timeout",
	"claude.login_timeout",
	"claude.stop_timeout",
	"log.level",
	"daemon.drain_timeout",
	"telegram.timezone",
	"claude.retry_after_limit",
	"budget.*",
	"scheduler.max_per_chat",
	// Webhooks: the handler's triggers are replaced on SIGHUP
	// (cmd/untether calls service.SetTriggers); http.listen needs a
	// restart.
	"triggers",
}

// IsReloadable reports whether a change to key can be applied on SIGHUP.
func IsReloadable(key string) bool {
	sec, _, _ := strings.Cut(key, ".")
	return slices.Contains(reloadable, key) || slices.Contains(reloadable, sec+".*")
}

// Diff compares c with next and returns the keys whose values differ, in
// schema order, split into those a running daemon can apply on SIGHUP and
// those that need a restart. An empty list and an unset one are equal. Both
// configs must be non-nil. Keys are names only, so the result is safe to log
// even when the bot token changed.
func (c *Config) Diff(next *Config) (reloadable, needsRestart []string) {
	a, b := c.fields(), next.fields()
	for i := range a {
		if equalValues(a[i].value, b[i].value) {
			continue
		}
		if IsReloadable(a[i].key) {
			reloadable = append(reloadable, a[i].key)
		} else {
			needsRestart = append(needsRestart, a[i].key)
		}
	}
	return reloadable, needsRestart
}

// Reloaded returns a copy of c with every reloadable key taken from next:
// what SIGHUP applies. Keys that need a restart keep c's values, so the
// result describes what the running daemon actually uses. Slices and maps
// are shared with next, which is never modified afterwards.
func (c *Config) Reloaded(next *Config) *Config {
	out := *c
	a, b := out.fields(), next.fields()
	for i := range a {
		if IsReloadable(a[i].key) {
			a[i].value.Set(b[i].value)
		}
	}
	return &out
}

func equalValues(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Slice, reflect.Map:
		if a.Len() == 0 && b.Len() == 0 {
			return true
		}
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// Dump renders c as TOML, one section per table and every key in schema
// order, with the bot token shown as "[redacted]". It is what `untether
// check` prints as the effective configuration, and what the golden tests
// compare.
func (c *Config) Dump() string {
	var b strings.Builder
	section := ""
	var lists []field
	for _, f := range c.fields() {
		if f.value.Kind() == reflect.Map && !strings.Contains(f.key, ".") {
			dumpTables(&b, f.key, f.value)
			continue
		}
		sec, key, _ := strings.Cut(f.key, ".")
		if key == "" { // a list section goes last, as [[section]] tables
			lists = append(lists, f)
			continue
		}
		if sec != section {
			if section != "" {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "[%s]\n", sec)
			section = sec
		}
		fmt.Fprintf(&b, "%s = %s\n", key, tomlValue(f.value))
	}
	for _, f := range lists {
		for i := range f.value.Len() {
			entry := f.value.Index(i)
			fmt.Fprintf(&b, "\n[[%s]]\n", f.key)
			for j := range entry.NumField() {
				fmt.Fprintf(&b, "%s = %s\n", entry.Type().Field(j).Tag.Get("toml"), tomlValue(entry.Field(j)))
			}
		}
	}
	return b.String()
}

// dumpTables renders a map of tables ([projects.<name>]) sorted by name,
// every key of each in declaration order.
func dumpTables(b *strings.Builder, section string, m reflect.Value) {
	names := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		names = append(names, k.String())
	}
	slices.Sort(names)
	for _, name := range names {
		t := m.MapIndex(reflect.ValueOf(name))
		fmt.Fprintf(b, "\n[%s.%s]\n", section, quoteKey(name))
		for i := range t.NumField() {
			fmt.Fprintf(b, "%s = %s\n", t.Type().Field(i).Tag.Get("toml"), tomlValue(t.Field(i)))
		}
	}
}

// tomlValue renders one of the schema's value types as a TOML literal.
func tomlValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Secret:
		if x.IsZero() {
			return `""`
		}
		return quoteString(x.String())
	case Duration:
		return quoteString(x.String())
	}
	switch v.Kind() {
	case reflect.String:
		return quoteString(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		s := strconv.FormatFloat(v.Float(), 'f', -1, 64)
		if !strings.ContainsAny(s, ".eEn") { // TOML floats need a fraction
			s += ".0"
		}
		return s
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i] = tomlValue(v.Index(i))
		}
		return "[" + strings.Join(items, ", ") + "]"
	case reflect.Struct: // a project's budget, as an inline table
		items := make([]string, v.NumField())
		for i := range items {
			items[i] = v.Type().Field(i).Tag.Get("toml") + " = " + tomlValue(v.Field(i))
		}
		return "{ " + strings.Join(items, ", ") + " }"
	case reflect.Map:
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		if len(keys) == 0 {
			return "{}"
		}
		slices.Sort(keys)
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = quoteKey(k) + " = " + tomlValue(v.MapIndex(reflect.ValueOf(k)))
		}
		return "{ " + strings.Join(items, ", ") + " }"
	}
	// Unreachable while the schema only uses the types above; the test that
	// dumps a full config fails if a new type is added without a case here.
	return fmt.Sprintf("<unsupported %s>", v.Type())
}

// quoteString writes s as a TOML basic string. Go's strconv.Quote is close
// but emits \x and \a escapes that TOML does not have.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError || r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
