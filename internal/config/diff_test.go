package config

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wantReloadable is the brief's list of keys safe to apply on SIGHUP, written
// out independently of the implementation's table.
var wantReloadable = map[string]bool{
	"telegram.allowed_user_ids":   true,
	"telegram.allow_any_user":     true,
	"telegram.allowed_chat_ids":   true,
	"telegram.group_trigger":      true,
	"telegram.conflict_grace":     true,
	"claude.models":               true,
	"files.max_upload_mb":         true,
	"files.keep":                  true,
	"progress.interval":           true,
	"progress.max_rows":           true,
	"progress.verbose":            true,
	"progress.on_finish":          true,
	"progress.typing":             true,
	"progress.drafts":             true,
	"claude.idle_timeout":         true,
	"claude.approval_timeout":     true,
	"claude.login_timeout":        true,
	"telegram.pin_panel":          true,
	"claude.stop_timeout":         true,
	"log.level":                   true,
	"daemon.drain_timeout":        true,
	"state.retention":             true,
	"progress.stall_after":        true,
	"progress.stall_notify_after": true,
	"telegram.album_wait":         true,
	"telegram.forward_wait":       true,
	"files.outbox_keep":           true,
	"files.deny":                  true,
	"files.zip_dirs":              true,
	"files.max_files_per_turn":    true,
	"files.export_in_groups":      true,
	"voice.api_url":               true,
	"voice.api_key":               true,
	"voice.api_key_env":           true,
	"voice.model":                 true,
	"voice.language":              true,
	"voice.command":               true,
	"voice.ffmpeg":                true,
	"voice.max_mb":                true,
	"voice.timeout":               true,
	"telegram.timezone":           true,
	"claude.retry_after_limit":    true,
	"budget.daily_usd":            true,
	"budget.monthly_usd":          true,
	"budget.warn_at":              true,
	"budget.unreported_turn_usd":  true,
	"scheduler.max_per_chat":      true,
	// Projects are read at each spawn; a chat on a removed one is told.
	"projects":                       true,
	"telegram.default_project":       true,
	"telegram.topic_default_project": true,
	"render.show_resume_line":        true,
	"render.context_warn_at":         true,
	"render.context_full_at":         true,
	// The webhook handler takes the new list on SIGHUP (cmd/untether);
	// the listener's address needs a restart.
	"triggers": true,
}

// mutate changes v to a different value of its type.
func mutate(t *testing.T, v reflect.Value) {
	t.Helper()
	switch x := v.Addr().Interface().(type) {
	case *Secret:
		*x = NewSecret(x.Reveal() + "x")
		return
	case *Duration:
		*x += 1
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		val := reflect.New(v.Type().Elem()).Elem()
		if val.Kind() == reflect.String {
			val.SetString("v")
		}
		m.SetMapIndex(reflect.ValueOf("K"), val)
		v.Set(m)
	default:
		t.Fatalf("mutate: unhandled kind %s", v.Kind())
	}
}

func TestDiffEachKey(t *testing.T) {
	base := Default()
	keys := schemaKeys()
	for i, key := range keys {
		t.Run(key, func(t *testing.T) {
			next := Default()
			mutate(t, next.fields()[i].value)
			reload, restart := base.Diff(&next)
			if wantReloadable[key] {
				assert.Equal(t, []string{key}, reload)
				assert.Empty(t, restart)
			} else {
				assert.Empty(t, reload)
				assert.Equal(t, []string{key}, restart)
			}
			assert.Equal(t, wantReloadable[key], IsReloadable(key))
		})
	}
	var all []string
	for _, f := range base.fields() {
		all = append(all, f.key)
	}
	for key := range wantReloadable {
		assert.Contains(t, all, key, "the reloadable list names a key the schema lacks")
	}
}

// TestReloadedTakesExactlyTheReloadableKeys changes every key at once: the
// reloaded config must carry the new value of each reloadable key and the
// running value of every other.
func TestReloadedTakesExactlyTheReloadableKeys(t *testing.T) {
	cur := Default()
	next := Default()
	for _, f := range next.fields() {
		mutate(t, f.value)
	}
	got := cur.Reloaded(&next)
	curF, nextF, gotF := cur.fields(), next.fields(), got.fields()
	for i, f := range gotF {
		want := curF[i]
		if wantReloadable[f.key] {
			want = nextF[i]
		}
		assert.Equal(t, want.value.Interface(), f.value.Interface(), f.key)
	}
	assert.Equal(t, Default(), cur, "the running config is not modified")
}

func TestDiff(t *testing.T) {
	base := Default()
	base.Telegram.BotToken = NewSecret(testToken)
	base.Telegram.AllowedUserIDs = []int64{1}

	t.Run("identical", func(t *testing.T) {
		next := base
		reload, restart := base.Diff(&next)
		assert.Nil(t, reload)
		assert.Nil(t, restart)
	})

	t.Run("empty equals unset", func(t *testing.T) {
		next := base
		next.Telegram.AllowedChatIDs = []int64{}
		next.Claude.ExtraArgs = []string{}
		next.Claude.Env = map[string]string{}
		reload, restart := base.Diff(&next)
		assert.Nil(t, reload)
		assert.Nil(t, restart)
	})

	t.Run("several, in schema order", func(t *testing.T) {
		next := base
		next.Log.Level = LogDebug
		next.Telegram.BotToken = NewSecret("1:other")
		next.Progress.Verbose = true
		next.Telegram.AllowedUserIDs = []int64{1, 2}
		next.Claude.Env = map[string]string{"A": "b"}
		next.State.Dir = "/elsewhere"
		reload, restart := base.Diff(&next)
		assert.Equal(t, []string{"telegram.allowed_user_ids", "progress.verbose", "log.level"}, reload)
		assert.Equal(t, []string{"telegram.bot_token", "claude.env", "state.dir"}, restart)
	})

	t.Run("projects", func(t *testing.T) {
		next := base
		next.Projects = map[string]Project{"api": {Path: "/srv/api"}}
		reload, restart := base.Diff(&next)
		assert.Equal(t, []string{"projects"}, reload)
		assert.Nil(t, restart)
		got := base.Reloaded(&next)
		assert.Equal(t, next.Projects, got.Projects, "SIGHUP picks up a new project")
	})

	t.Run("slice element change", func(t *testing.T) {
		next := base
		next.Telegram.AllowedUserIDs = []int64{7}
		reload, _ := base.Diff(&next)
		require.Equal(t, []string{"telegram.allowed_user_ids"}, reload)
	})
}
