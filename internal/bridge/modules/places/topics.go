package places

import (
	"context"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// In a forum every topic is its own chat (its own actor, session and
// settings), so a topic is a workspace: /project inside it binds it, and
// /topic NAME [BRANCH] makes a new topic with createForumTopic, named after
// the project (and branch), already bound, so its first message starts
// there. The bot must be an administrator allowed to manage topics; when
// it is not, Telegram refuses and the user is told so.

// topicNameMax is Telegram's limit on a topic's name.
const topicNameMax = 128

func (m *Module) createTopic(c *chat.Chat, args string, msg *models.Message) {
	respond := func(html string) { c.Reply(html, msg.ID) }
	fields := strings.Fields(args)
	if len(fields) == 0 || len(fields) > 2 {
		respond("Usage: <code>/topic PROJECT [BRANCH]</code> makes a forum topic that works in that project (and git worktree).")
		return
	}
	if !msg.Chat.IsForum {
		respond("🧵 /topic makes a topic in a forum group (a supergroup with topics), so it works only there. Here, /project switches this " + c.ChatWord() + ".")
		return
	}
	cfg := c.Config()
	p, ok := cfg.Project(fields[0])
	if !ok {
		respond("❓ There is no project " + render.Bold(fields[0]) + ".\n\n" + projectList(cfg, c.ProjectNames(cfg)))
		return
	}
	if !c.MayUse(p) { // every topic of the group is the group's
		respond(c.NotOpenText(p))
		return
	}
	pl := chat.Place{Project: p.Name}
	if len(fields) == 2 {
		if p.Remote() {
			respond("🌐 Project " + render.Bold(p.Name) + " is on " + render.EscapeHTML(p.Host) + "; branches (git worktrees) work only for projects on this machine.")
			return
		}
		pl.Branch = fields[1]
	}
	forum := msg.Chat.ID
	c.Offload(func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, gitTimeout+30*time.Second)
		defer cancel()
		html := m.makeTopic(ctx, forum, p, pl)
		return func() { respond(html) }
	})
}

// makeTopic makes the worktree (if a branch is asked for), the topic, and
// the binding, and returns what to tell the user.
func (m *Module) makeTopic(ctx context.Context, forum int64, p config.ProjectSettings, pl chat.Place) string {
	if pl.Branch != "" {
		if _, err := m.ensureWorktree(ctx, p, pl.Branch); err != nil {
			return "⚠️ " + render.EscapeHTML(err.Error())
		}
	}
	name := render.Truncate(pl.String(), topicNameMax)
	thread, err := m.host.CreateForumTopic(ctx, forum, name)
	if err != nil {
		m.log.Warn().Err(err).Msg("create a forum topic")
		return topicRefusal(err)
	}
	key := state.ChatKey{Chat: state.ChatID(forum), Thread: state.ThreadID(thread)}
	if err := m.host.BindTopic(key, pl); err != nil {
		m.log.Error().Err(err).Msg("bind a new topic to its project")
		return "⚠️ Made the topic " + render.Bold(name) + ", but could not bind it: send <code>/project " +
			render.EscapeHTML(p.Name) + "</code> in it."
	}
	where := chat.WhereText(p, pl)
	m.host.SendTo(ctx, key, outbox.High,
		outbox.Content{Text: "📁 This topic works in " + render.Bold(pl.String()) + "\n<code>" + render.EscapeHTML(where) +
			"</code>\nWrite here to start its session."}, outbox.SendOptions{})
	return "🧵 Made the topic " + render.Bold(name) + " for " + render.Code(where) + "."
}

// topicRefusal explains why Telegram would not create a topic.
func topicRefusal(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "not enough rights") || strings.Contains(msg, "CHAT_ADMIN_REQUIRED"):
		return "🔒 I may not create topics in this group. Make me an administrator with the <b>Manage Topics</b> right, then try again."
	case strings.Contains(msg, "not a forum"):
		return "🧵 This group has no topics: turn them on in the group's settings, then try again."
	}
	return "⚠️ Telegram would not create the topic: " + render.EscapeHTML(msg)
}
