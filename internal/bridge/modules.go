package bridge

import (
	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/modules/background"
	"github.com/untether/untether/internal/bridge/modules/budget"
	"github.com/untether/untether/internal/bridge/modules/compact"
	"github.com/untether/untether/internal/bridge/modules/effort"
	"github.com/untether/untether/internal/bridge/modules/files"
	"github.com/untether/untether/internal/bridge/modules/login"
	"github.com/untether/untether/internal/bridge/modules/mcpnotice"
	"github.com/untether/untether/internal/bridge/modules/panel"
	"github.com/untether/untether/internal/bridge/modules/phone"
	"github.com/untether/untether/internal/bridge/modules/places"
	"github.com/untether/untether/internal/bridge/modules/schedules"
	"github.com/untether/untether/internal/bridge/modules/settings"
)

// modules are the bridge's features, in the order the engine calls their
// hooks and lists their commands in /help. The order is behaviour: a mode
// switch the CLI reports is followed (settings) before a turn's cost is
// counted (budget) and a waiting scheduled run goes (schedules); the code
// a /login waits for is taken (login) before any message hook could pass
// it on (phone).
func modules(h *chat.Host) []chat.Module {
	return []chat.Module{
		settings.New(),
		effort.New(),
		budget.New(h),
		schedules.New(h),
		places.New(h),
		login.New(h),
		files.New(h),
		phone.New(h),
		mcpnotice.New(),
		background.New(),
		compact.New(),
		panel.New(h),
	}
}
