package render_test

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// This file holds a small, independent validator of Telegram's HTML rules,
// used by the table, golden and fuzz tests. It deliberately shares no code
// with the package under test.

var (
	// Telegram decodes only these named entities, plus numeric ones.
	entityRE = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});`)
	hrefRE   = regexp.MustCompile(`^ href="([^"<>]*)"$`)
	classRE  = regexp.MustCompile(`^ class="language-[A-Za-z0-9_+#.-]+"$`)
)

// allowedTags is the subset of Telegram's tags the renderer may emit.
var allowedTags = map[string]bool{
	"b": true, "i": true, "s": true, "u": true,
	"code": true, "pre": true, "a": true, "blockquote": true,
}

type openElem struct {
	name      string
	hasText   bool // pre: text seen directly inside
	codeChild bool // pre: a <code class> child was opened
	codeDone  bool // pre: that child has closed; nothing may follow
}

// validateTelegramHTML returns an error if s is not HTML Telegram would
// parse into exactly the intended entities: only allowed tags and
// attributes, balanced, nested per the Bot API's rules (code/pre contain
// nothing but pre>code[class]; code/pre only inside blockquote; no nested
// links, blockquotes or same-type entities), all of &<>" escaped, valid
// UTF-8.
func validateTelegramHTML(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("invalid UTF-8")
	}
	var stack []*openElem
	top := func() *openElem {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '<':
			j := strings.IndexByte(s[i:], '>')
			if j < 0 {
				return fmt.Errorf("byte %d: unterminated tag", i)
			}
			tag := s[i+1 : i+j]
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				t := top()
				if t == nil || t.name != name {
					return fmt.Errorf("byte %d: </%s> does not close the innermost open tag (%v)", i, name, names(stack))
				}
				stack = stack[:len(stack)-1]
				if name == "code" {
					if p := top(); p != nil && p.name == "pre" {
						p.codeDone = true
					}
				}
			} else {
				if err := checkStart(tag, stack); err != nil {
					return fmt.Errorf("byte %d: <%s>: %w", i, tag, err)
				}
				name, _, _ := strings.Cut(tag, " ")
				if name == "code" {
					if p := top(); p != nil && p.name == "pre" {
						p.codeChild = true
					}
				}
				stack = append(stack, &openElem{name: name})
			}
			i += j + 1
			continue
		case '>', '"':
			return fmt.Errorf("byte %d: unescaped %q in text", i, c)
		case '&':
			m := entityRE.FindString(s[i:])
			if m == "" {
				return fmt.Errorf("byte %d: bare '&' or unsupported entity", i)
			}
			i += len(m)
		default:
			i++
		}
		if t := top(); t != nil && t.name == "pre" {
			if t.codeChild {
				return fmt.Errorf("byte %d: text after <code> inside <pre>", i)
			}
			t.hasText = true
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed tags %v", names(stack))
	}
	return nil
}

func checkStart(tag string, stack []*openElem) error {
	name, attrs, _ := strings.Cut(tag, " ")
	if attrs != "" {
		attrs = " " + attrs
	}
	if !allowedTags[name] {
		return fmt.Errorf("tag not allowed")
	}
	var parent *openElem
	if len(stack) > 0 {
		parent = stack[len(stack)-1]
	}
	switch name {
	case "a":
		m := hrefRE.FindStringSubmatch(attrs)
		if m == nil {
			return fmt.Errorf("a needs exactly one quoted href")
		}
		for k := 0; k < len(m[1]); k++ {
			if m[1][k] == '&' && entityRE.FindString(m[1][k:]) == "" {
				return fmt.Errorf("bare '&' in href")
			}
		}
	case "code":
		if attrs != "" && !(parent != nil && parent.name == "pre" && classRE.MatchString(attrs)) {
			return fmt.Errorf("code attributes %q only allowed as pre>code class=language-x", attrs)
		}
	default:
		if attrs != "" {
			return fmt.Errorf("unexpected attributes %q", attrs)
		}
	}
	for _, anc := range stack {
		if anc.name == name {
			return fmt.Errorf("%s nested in itself", name)
		}
		if anc.name == "code" {
			return fmt.Errorf("nothing may nest inside code")
		}
		if anc.name == "pre" && !(name == "code" && anc == parent && !parent.hasText && !parent.codeChild) {
			return fmt.Errorf("only a leading <code class> may nest inside pre")
		}
	}
	switch name {
	case "code", "pre":
		for _, anc := range stack {
			if anc.name != "blockquote" && anc.name != "pre" {
				return fmt.Errorf("%s inside %s", name, anc.name)
			}
		}
	case "blockquote":
		if len(stack) > 0 {
			return fmt.Errorf("blockquote must not be nested in %v", names(stack))
		}
	}
	return nil
}

func names(stack []*openElem) []string {
	out := make([]string, len(stack))
	for i, e := range stack {
		out[i] = e.name
	}
	return out
}
