package transcript

import (
	"strings"
	"time"
)

const timeLayout = "2006-01-02 15:04:05 MST"

func (x *exporter) render(id string, loc *time.Location, omitted int64, skipped int) string {
	var b strings.Builder
	b.WriteString("# Claude Code session " + code(id) + "\n\n")
	x.header(&b, loc)
	if omitted > 0 {
		b.WriteString("> The transcript's first " + thousands(omitted) + " bytes are not included: it is longer than one export reads.\n\n")
	}
	if skipped > 0 {
		b.WriteString("> " + plural(skipped, "line") + " too long to read (over 8 MiB) left out.\n\n")
	}
	for _, s := range x.sections {
		b.WriteString("---\n\n")
		if s.who != "" {
			b.WriteString("## " + s.who)
			if !s.at.IsZero() {
				b.WriteString(" · " + s.at.In(loc).Format(timeLayout))
			}
			b.WriteString("\n\n")
		}
		paras(&b, s.person)
		if len(s.claude) > 0 {
			b.WriteString("## Claude\n\n")
			paras(&b, s.claude)
		}
		if s.calls > 0 {
			b.WriteString("*" + plural(s.calls, "API call") + " · " + tokens(s.usage) + "*\n\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func (x *exporter) header(b *strings.Builder, loc *time.Location) {
	item := func(k, v string) { b.WriteString("- " + k + ": " + v + "\n") }
	if x.about.cwd != "" {
		item("Directory", code(x.about.cwd))
	}
	if x.about.branch != "" {
		item("Branch", code(x.about.branch))
	}
	if !x.about.first.IsZero() {
		item("Time", x.about.first.In(loc).Format(timeLayout)+" to "+x.about.last.In(loc).Format(timeLayout))
	}
	item("Turns", thousands(int64(x.turns)))
	if len(x.models) > 0 {
		ms := make([]string, len(x.models))
		for i, m := range x.models {
			ms[i] = code(m)
		}
		item("Model", strings.Join(ms, ", "))
	}
	item("Usage", plural(x.calls, "API call")+" · "+tokens(x.total)+" (the answers shown here)")
	if x.cost != nil {
		item("Cost", dollars(*x.cost)+", the CLI's own running total as it last saved it (when a CLI process exits)")
	} else {
		item("Cost", "not recorded in the transcript (the CLI saves it when a process exits)")
	}
	if x.about.version != "" {
		item("Claude Code", x.about.version)
	}
	b.WriteString("\n")
}

// paras writes paragraphs, consecutive tool calls as one list.
func paras(b *strings.Builder, ps []para) {
	for i, p := range ps {
		if p.tool {
			b.WriteString("- " + p.text)
			if p.failed {
				b.WriteString(" — failed")
			}
			b.WriteString("\n")
			if i+1 < len(ps) && ps[i+1].tool {
				continue
			}
			b.WriteString("\n")
			continue
		}
		b.WriteString(p.text + "\n\n")
	}
}

func tokens(u usage) string {
	s := "tokens " + thousands(u.Input) + " in, " + thousands(u.Output) + " out"
	if u.CacheRead > 0 {
		s += ", " + thousands(u.CacheRead) + " cache read"
	}
	if u.CacheCreation > 0 {
		s += ", " + thousands(u.CacheCreation) + " cache write"
	}
	return s
}
