package bridge

import (
	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/modules/background"
	"github.com/untether/untether/internal/bridge/modules/budget"
	"github.com/untether/untether/internal/bridge/modules/compact"
	"github.com/untether/untether/internal/bridge/modules/effort"
	"github.com/untether/untether/internal/bridge/modules/export"
	"github.com/untether/untether/internal/bridge/modules/files"
	"github.com/untether/untether/internal/bridge/modules/login"
	"github.com/untether/untether/internal/bridge/modules/mcpnotice"
	"github.com/untether/untether/internal/bridge/modules/metrics"
	"github.com/untether/untether/internal/bridge/modules/panel"
	"github.com/untether/untether/internal/bridge/modules/phone"
	"github.com/untether/untether/internal/bridge/modules/places"
	"github.com/untether/untether/internal/bridge/modules/schedules"
	"github.com/untether/untether/internal/bridge/modules/settings"
	"github.com/untether/untether/internal/bridge/modules/triggers"
	"github.com/untether/untether/internal/bridge/modules/wakeups"
)

// modules are the bridge's features, in the order the engine calls their
// hooks and lists their commands in /help. The order is behaviour: the
// metrics note a turn's result before any module answers it; a mode
// switch the CLI reports is followed (settings) before a turn's cost is
// counted (budget) and a waiting scheduled run or webhook run goes
// (schedules, triggers); the code a /login waits for is taken (login)
// before any message hook could pass it on (phone). The bridge keeps the
// modules it serves from outside the engine (the webhooks' triggers) in
// out.
func modules(h *chat.Host, out *served) []chat.Module {
	return []chat.Module{
		metrics.New(h),
		settings.New(),
		effort.New(),
		budget.New(h),
		schedules.New(h),
		out.keep(triggers.New(h)),
		places.New(h),
		login.New(h),
		files.New(h),
		export.New(h),
		phone.New(h),
		mcpnotice.New(),
		background.New(),
		wakeups.New(h),
		compact.New(),
		panel.New(h),
	}
}
