package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Load reads the TOML file at path and returns the validated Config; see Parse.
// A missing file is reported with an error satisfying errors.Is(err,
// fs.ErrNotExist). Errors from Parse get the path filled in.
func Load(path string, env func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err) // *PathError already names the file
	}
	cfg, err := Parse(data, env)
	if err != nil {
		var de *DecodeError
		var ve *ValidationError
		switch {
		case errors.As(err, &de):
			de.Path = path
		case errors.As(err, &ve):
			ve.Path = path
		}
		return nil, err
	}
	return cfg, nil
}

// Parse decodes a TOML document, applies defaults, the environment override
// of the bot token (EnvBotToken) and ~ expansion (from HOME), then validates.
// env looks up environment variables; nil means an empty environment, which
// keeps tests hermetic.
//
// Errors are a *DecodeError when the document is not valid TOML or a value has
// the wrong type, else a *ValidationError listing every problem at once,
// unknown keys included.
func Parse(data []byte, env func(string) string) (*Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	envToken := env(EnvBotToken)

	cfg := Default()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		return nil, newDecodeError(err, envToken)
	}

	var ps problems
	checkKeys(md, &ps)

	tokenFromEnv := envToken != ""
	if tokenFromEnv {
		cfg.Telegram.BotToken = NewSecret(envToken)
	}
	cfg.expandPaths(env("HOME"), &ps)
	cfg.resolveVoice(env, &ps)    // validate_phone.go
	cfg.resolveTriggers(env, &ps) // service.go
	cfg.Telegram.APIURL = strings.TrimRight(cfg.Telegram.APIURL, "/")
	cfg.validate(tokenFromEnv, &ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// DefaultPath returns the config file to use when none is given: the value
// of EnvConfigPath (with ~ expanded), else DefaultConfigPath under HOME. If
// HOME is unknown the path is returned unexpanded, so the "not found" error
// still says where untether looked.
func DefaultPath(env func(string) string) string {
	if env == nil {
		env = func(string) string { return "" }
	}
	p := env(EnvConfigPath)
	if p == "" {
		p = DefaultConfigPath
	}
	if home := env("HOME"); home != "" {
		if exp, ok := expandHome(p, home); ok {
			return exp
		}
	}
	return p
}

// expandHome expands a leading "~" or "~/" using home. ok is false when p
// needs expansion and home is empty. "~user/" is not supported and is left
// alone, to be rejected as a relative path.
func expandHome(p, home string) (string, bool) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, true
	}
	if home == "" {
		return p, false
	}
	return filepath.Join(home, p[1:]), true
}

// expandPaths expands ~ in every path-valued key.
func (c *Config) expandPaths(home string, ps *problems) {
	for _, f := range []struct {
		key string
		p   *string
	}{
		{"claude.binary", &c.Claude.Binary},
		{"claude.workdir", &c.Claude.Workdir},
		{"claude.home", &c.Claude.Home},
		{"state.dir", &c.State.Dir},
		{"voice.ffmpeg", &c.Voice.FFmpeg},
	} {
		exp, ok := expandHome(*f.p, home)
		if !ok {
			ps.add(f.key, "cannot expand ~ because HOME is not set; use an absolute path")
			continue
		}
		*f.p = exp
	}
	// A project on another host keeps its ~: it is that host's home.
	for name, p := range c.Projects {
		if p.Remote() {
			continue
		}
		for _, f := range []struct {
			key string
			p   *string
		}{{"path", &p.Path}, {"home", &p.Home}, {"binary", &p.Binary}} {
			exp, ok := expandHome(*f.p, home)
			if !ok {
				ps.add(projectsKey+"."+quoteKey(name)+"."+f.key, "cannot expand ~ because HOME is not set; use an absolute path")
				continue
			}
			*f.p = exp
		}
		c.Projects[name] = p
	}
}

// checkKeys reports keys the schema does not have. Undecoded catches most;
// the exact-name pass catches keys that differ from the schema only in case,
// which the toml package silently decodes (it falls back to a case-insensitive
// match) but which we reject so that there is one spelling of each key.
func checkKeys(md toml.MetaData, ps *problems) {
	known := schemaKeys()
	unknown := md.Undecoded()
	for _, k := range md.Keys() {
		if !isSchemaKey(k, known) && !slices.ContainsFunc(unknown, func(u toml.Key) bool { return slices.Equal(u, k) }) {
			unknown = append(unknown, k)
		}
	}
	// Report a whole unknown table once, not every key inside it.
	for _, k := range unknown {
		if slices.ContainsFunc(unknown, func(u toml.Key) bool { return len(u) < len(k) && slices.Equal(u, k[:len(u)]) }) {
			continue
		}
		msg := "unknown key"
		if s := suggest(k, known); s != "" {
			msg += "; did you mean " + s + "?"
		}
		ps.add(k.String(), "%s", msg)
	}
}

// envKey is the one map-valued key: its children are user-chosen names.
const envKey = "claude.env"

// isSchemaKey reports whether k names a section, a key, an entry of
// claude.env, or a project's table, key or env entry, spelled exactly as in
// the schema. (Project names themselves are checked by validation.)
func isSchemaKey(k toml.Key, known []string) bool {
	switch {
	case len(k) == 0:
		return false
	case len(k) == 1:
		return slices.Contains(sectionNames(), k[0])
	case k[0] == projectsKey:
		return len(k) == 2 || len(k) == 3 && slices.Contains(projectKeys(), k[2]) || len(k) == 4 && k[2] == "env" ||
			len(k) == 4 && k[2] == budgetKey && slices.Contains(projectBudgetKeys(), k[3])
	case len(k) > 2 && k[0]+"."+k[1] == envKey:
		return true
	case len(k) == 2 && slices.Contains(listSections(), k[0]):
		return slices.Contains(listKeys(k[0]), k[1])
	case len(k) == 2:
		return slices.Contains(known, k[0]+"."+k[1])
	}
	return false
}

// suggest returns the schema key the user most likely meant by k, or "".
func suggest(k toml.Key, known []string) string {
	if len(k) == 0 {
		return ""
	}
	candidates := known
	switch {
	case len(k) == 1:
		candidates = sectionNames()
	case k[0] == projectsKey && len(k) == 3:
		candidates = nil
		for _, pk := range projectKeys() {
			candidates = append(candidates, projectsKey+"."+quoteKey(k[1])+"."+pk)
		}
	case k[0] == projectsKey && len(k) == 4 && k[2] == budgetKey:
		candidates = nil
		for _, bk := range projectBudgetKeys() {
			candidates = append(candidates, projectsKey+"."+quoteKey(k[1])+"."+budgetKey+"."+bk)
		}
	}
	name := strings.Join(k, ".")
	best, bestDist := "", 3 // more than two edits away is not a typo
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		if d := editDistance(strings.ToLower(name), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best != "" {
		return best
	}
	// A known key in the wrong section, e.g. poll_timeout under [claude].
	last := strings.ToLower(k[len(k)-1])
	for _, c := range known {
		if strings.HasSuffix(c, "."+last) {
			return c
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes; keys
// are ASCII.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// field is one leaf key of the schema and its value in some Config.
type field struct {
	key   string
	value reflect.Value
}

// fields walks c's sections and their keys in declaration order, using the
// toml tags. The schema is two levels deep by design: sections, then keys.
// A list section ([[schedules]]) is one field holding the whole list: its
// entries have no names to compare key by key. The one map of tables,
// [projects.<name>], is likewise a single field "projects".
func (c *Config) fields() []field {
	var out []field
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		sec := v.Type().Field(i).Tag.Get("toml")
		sv := v.Field(i)
		if sv.Kind() == reflect.Slice || sv.Kind() == reflect.Map {
			out = append(out, field{key: sec, value: sv})
			continue
		}
		for j := range sv.NumField() {
			out = append(out, field{key: sec + "." + sv.Type().Field(j).Tag.Get("toml"), value: sv.Field(j)})
		}
	}
	return out
}

// schemaKeys returns every leaf key of the schema, e.g. "telegram.bot_token".
func schemaKeys() []string {
	var c Config
	var keys []string
	for _, f := range c.fields() {
		keys = append(keys, f.key)
	}
	return keys
}

// projectKeys returns the keys of a [projects.<name>] table.
func projectKeys() []string {
	t := reflect.TypeFor[Project]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("toml"))
	}
	return keys
}

// listSections returns the sections that are arrays of tables.
func listSections() []string {
	t := reflect.TypeFor[Config]()
	var names []string
	for i := range t.NumField() {
		if t.Field(i).Type.Kind() == reflect.Slice {
			names = append(names, t.Field(i).Tag.Get("toml"))
		}
	}
	return names
}

// listKeys returns the keys of one entry of the list section sec.
func listKeys(sec string) []string {
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("toml") != sec || f.Type.Kind() != reflect.Slice {
			continue
		}
		elem := f.Type.Elem()
		keys := make([]string, elem.NumField())
		for j := range keys {
			keys[j] = elem.Field(j).Tag.Get("toml")
		}
		return keys
	}
	return nil
}

// sectionNames returns the top-level tables.
func sectionNames() []string {
	t := reflect.TypeFor[Config]()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		names = append(names, t.Field(i).Tag.Get("toml"))
	}
	return names
}
