package hookprompt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	template "github.com/DataDog/datadog-agent/pkg/template/text"
)

// Funcs returns the functions a prompt template may call besides
// text/template's builtins:
//
//	default D V   V, or D when V is missing or empty ("", 0, false, {}, [])
//	truncate N V  V's text cut to N characters, "…" added when cut
//	json V        V as compact JSON ("" when missing)
//	lower V       V's text in lower case
//	upper V       V's text in upper case
//	trim V        V's text without leading and trailing white space
//
// It also replaces the builtins that would fail on what a body holds with
// lenient ones: index (a missing step, an index out of range or a value
// that cannot be indexed gives nothing), slice (the same, bounds clamped),
// len (0 for what has no length), and the comparisons eq, ne, lt, le, gt
// and ge, which compare what their arguments print: as numbers when both
// read as numbers, else as text, so `eq .run_attempt 1` holds for a body's
// 1 and nothing fails on an object.
//
// "V's text" is what printing V shows: strings as they are, numbers as
// sent, objects and arrays as JSON, a missing value as nothing.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"default":  defaultTo,
		"truncate": truncate,
		"json":     toJSON,
		"lower":    func(v any) string { return strings.ToLower(text(v)) },
		"upper":    func(v any) string { return strings.ToUpper(text(v)) },
		"trim":     func(v any) string { return strings.TrimSpace(text(v)) },
		"index":    index,
		"slice":    slice,
		"len":      length,
		"eq":       eq,
		"ne":       func(a, b any) bool { return !eq(a, b) },
		"lt":       func(a, b any) bool { return compare(a, b) < 0 },
		"le":       func(a, b any) bool { return compare(a, b) <= 0 },
		"gt":       func(a, b any) bool { return compare(a, b) > 0 },
		"ge":       func(a, b any) bool { return compare(a, b) >= 0 },
		fieldFunc:  field,
		textFunc:   text,
		iterFunc:   iterable,
	}
}

// text is how a value prints.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		if x == nil {
			return ""
		}
		return toJSON(x)
	case []any:
		return toJSON(x)
	}
	return fmt.Sprint(v)
}

func toJSON(v any) string {
	if m, ok := v.(map[string]any); v == nil || ok && m == nil {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a prompt, not a web page
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case int:
		return x == 0
	}
	return false
}

func defaultTo(d, v any) any {
	if empty(v) {
		return d
	}
	return v
}

// truncate takes n as whatever the template wrote: an int constant, or a
// number from the body.
func truncate(n, v any) (string, error) {
	var limit int
	switch x := n.(type) {
	case int:
		limit = x
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return "", fmt.Errorf("truncate: %q is not a whole number", x.String())
		}
		limit = int(i)
	default:
		return "", fmt.Errorf("truncate: want a length, got %T", n)
	}
	s := text(v)
	if limit < 0 {
		limit = 0
	}
	if utf8.RuneCountInString(s) <= limit {
		return s, nil
	}
	i, count := 0, 0
	for i = range s {
		if count == limit {
			break
		}
		count++
	}
	return s[:i] + "…", nil
}

// field is a field chain: keys looked up in turn, nothing when one is
// missing or the value is not an object.
func field(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok = m[k]; !ok {
			return nil
		}
	}
	return v
}

func index(v any, keys ...any) any {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			s, ok := k.(string)
			if !ok {
				return nil
			}
			v = x[s]
		case []any:
			i, ok := arrayIndex(k)
			if !ok || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func arrayIndex(k any) (int, bool) {
	switch x := k.(type) {
	case int:
		return x, true
	case json.Number:
		i, err := x.Int64()
		return int(i), err == nil
	}
	return 0, false
}

// iterable is what range ranges over: an array, an object or a count;
// anything else ranges over nothing.
func iterable(v any) any {
	switch v.(type) {
	case []any, map[string]any, int:
		return v
	}
	return nil
}

func length(v any) int {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x)
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	return 0
}

// slice is v[i:j] (j optional) of a string, in characters, or of an array,
// with the bounds clamped.
func slice(v any, bounds ...any) any {
	var n int
	switch x := v.(type) {
	case string:
		n = utf8.RuneCountInString(x)
	case []any:
		n = len(x)
	default:
		return nil
	}
	lo, hi := 0, n
	if len(bounds) > 0 {
		i, _ := arrayIndex(bounds[0])
		lo = min(max(i, 0), n)
	}
	if len(bounds) > 1 {
		j, _ := arrayIndex(bounds[1])
		hi = min(max(j, lo), n)
	}
	if x, ok := v.([]any); ok {
		return x[lo:hi]
	}
	r := []rune(v.(string))
	return string(r[lo:hi])
}

// eq reports whether a prints as any of bs does (see compare).
func eq(a any, bs ...any) bool {
	for _, b := range bs {
		if compare(a, b) == 0 {
			return true
		}
	}
	return false
}

// compare orders what a and b print: as numbers when both read as
// numbers, else as text.
func compare(a, b any) int {
	ta, tb := text(a), text(b)
	fa, ea := strconv.ParseFloat(ta, 64)
	fb, eb := strconv.ParseFloat(tb, 64)
	if ea == nil && eb == nil {
		return cmp.Compare(fa, fb)
	}
	return strings.Compare(ta, tb)
}
