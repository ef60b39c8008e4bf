package chat

import (
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// A project's allowed_chat_ids is the operator's ceiling on who works in
// it. A chat (or forum topic: its group's id counts) the project does not
// list never sees it in /project's list, cannot /project or Resume to it,
// cannot bind a topic to it with /topic, and no scheduled run or limit
// retry takes it there. A chat whose stored choice a reload closed is
// moved back to the default project when it next writes, and told, as
// when its project is removed. The default projects are open to every
// chat (config validation).

// mayUse reports whether the chat may work in project p.
func (c *Chat) mayUse(p config.ProjectSettings) bool { return p.ChatAllowed(int64(c.key.Chat)) }

// usableProject is cfg.Project for this chat: a project not open to it is
// as good as absent.
func (c *Chat) usableProject(cfg *config.Config, name string) (config.ProjectSettings, bool) {
	p, ok := cfg.Project(name)
	if !ok || !c.mayUse(p) {
		return config.ProjectSettings{}, false
	}
	return p, true
}

// projectNames lists the projects open to the chat, in the config's order.
func (c *Chat) projectNames(cfg *config.Config) []string {
	var out []string
	for _, name := range cfg.ProjectNames() {
		if _, ok := c.usableProject(cfg, name); ok {
			out = append(out, name)
		}
	}
	return out
}

// notOpenText refuses a project the chat may not use.
func (c *Chat) notOpenText(p config.ProjectSettings) string {
	return "⛔ Project " + c.notOpen(p) + "."
}

// notOpen says that the chat may not use p: "<b>api</b> is not open to
// this chat (projects.api.allowed_chat_ids)".
func (c *Chat) notOpen(p config.ProjectSettings) string {
	return render.Bold(p.Name) + " is not open to this " + c.chatWord() +
		" (<code>projects." + render.EscapeHTML(p.Name) + ".allowed_chat_ids</code>)"
}

// goneWhy says why the chat's chosen project is no longer its to use.
func (c *Chat) goneWhy(cfg *config.Config, name string) string {
	if _, ok := cfg.Project(name); ok {
		return "is no longer open to this " + c.chatWord() + " (<code>projects." + render.EscapeHTML(name) + ".allowed_chat_ids</code>)"
	}
	return "is no longer in untether's configuration"
}

// leaveClosedProject lets go of the live session when the config no
// longer lets the chat work in its project (a reload removed the project
// or closed it to the chat): nothing the chat sends or presses reaches
// that CLI any more, its approvals are withdrawn and a running turn is
// interrupted, as /new does. The next message starts where the chat may
// work, and is told why (dropRemovedProject).
func (c *Chat) leaveClosedProject() {
	if c.sess == nil {
		return
	}
	if _, ok := c.usableProject(c.b.Config(), c.sessPlace.Project); ok {
		return
	}
	c.logger().Warn().Str("project", c.sessPlace.Project).Msg("the live session's project is no longer open to the chat; letting the session go")
	c.dropSession("its project is no longer open to this " + c.chatWord())
}
