package pathglob

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Valid reports whether pattern can be used.
func Valid(pattern string) error {
	p := strings.TrimPrefix(pattern, "/")
	if strings.TrimSpace(p) == "" {
		return errors.New("empty pattern")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			return fmt.Errorf("pattern %q has an empty segment", pattern)
		}
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	return nil
}

// Match reports whether rel, a slash-separated path relative to the
// project root, is covered by pattern. An invalid pattern matches
// everything: a typo in a deny list must not open it up.
func Match(pattern, rel string) bool {
	if Valid(pattern) != nil {
		return true
	}
	anchored := strings.HasPrefix(pattern, "/")
	pat := strings.Split(strings.ToLower(strings.TrimPrefix(pattern, "/")), "/")
	rel = strings.Trim(path.Clean("/"+strings.ToLower(rel)), "/")
	if rel == "" {
		return false // the root itself
	}
	comps := strings.Split(rel, "/")
	for i := range comps {
		if matchPrefix(pat, comps[i:]) {
			return true
		}
		if anchored {
			break
		}
	}
	return false
}

// MatchAny reports whether any of patterns covers rel.
func MatchAny(patterns []string, rel string) (string, bool) {
	for _, p := range patterns {
		if Match(p, rel) {
			return p, true
		}
	}
	return "", false
}

// matchPrefix reports whether pat matches comps[:j] for some j ≥ 1: the
// path itself or one of the directories it lies in.
func matchPrefix(pat, comps []string) bool {
	if len(pat) == 0 {
		return false
	}
	if pat[0] == "**" {
		rest := pat[1:]
		if len(rest) == 0 {
			return true // a trailing "**" covers the directory itself too
		}
		for k := 0; k <= len(comps); k++ {
			if matchPrefix(rest, comps[k:]) {
				return true
			}
		}
		return false
	}
	if len(comps) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], comps[0]); !ok {
		return false
	}
	if len(pat) == 1 {
		return true
	}
	return matchPrefix(pat[1:], comps[1:])
}
