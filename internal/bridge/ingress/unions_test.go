package ingress

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reachableDecoders walks the Go types an update decodes into (through the
// variants of known unions too) and returns every type with an UnmarshalJSON
// of its own, with the first path that reaches it.
func reachableDecoders(root reflect.Type) map[reflect.Type]string {
	found := map[reflect.Type]string{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if seen[t] {
			return
		}
		seen[t] = true
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			found[t] = path
			for _, v := range unionVariants(t) {
				walk(v, path+"{"+v.Name()+"}")
			}
			return
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for _, f := range fieldsOf(t) {
			walk(f.typ, path+"."+f.name)
		}
	}
	walk(root, "update")
	return found
}

// unionVariants lists a union's variant types: the library keeps each in a
// pointer field of the union struct.
func unionVariants(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	for _, f := range fieldsOf(t) {
		ft := f.typ
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			out = append(out, ft.Elem())
		}
	}
	return out
}

// TestUnionsCoverEveryDecoderInUpdate fails when go-telegram/bot gains (or a
// message gains) a type with its own UnmarshalJSON that the repairer has no
// spec for: such a type is a poison update waiting for a Telegram release.
func TestUnionsCoverEveryDecoderInUpdate(t *testing.T) {
	found := reachableDecoders(typeOf[models.Update]())
	var names []string
	for typ, path := range found {
		names = append(names, typ.Name())
		_, known := unions[typ]
		assert.True(t, known, "%s (reached as %s) decodes itself but has no union spec", typ, path)
	}
	sort.Strings(names)
	// The union types an update can carry in go-telegram/bot v1.19.0. The
	// issue also names OwnedGift and StoryAreaType: in this version they
	// appear only in method results (getBusinessAccountGifts, postStory),
	// never inside an update; they have specs anyway.
	assert.Equal(t, []string{"BackgroundFill", "BackgroundType", "ChatBoostSource", "ChatMember",
		"MaybeInaccessibleMessage", "MessageOrigin", "PaidMedia", "ReactionType"}, names)
}

// TestNoInterfaceFieldInUpdate: a field of a non-empty interface type can
// never be decoded; the repairer would drop it every time.
func TestNoInterfaceFieldInUpdate(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() == reflect.Interface {
			assert.Zero(t, typ.NumMethod(), "%s is an interface the decoder cannot fill", path)
			return
		}
		if seen[typ] || typ.Kind() != reflect.Struct {
			return
		}
		seen[typ] = true
		for _, f := range fieldsOf(typ) {
			walk(f.typ, path+"."+f.name)
		}
		for _, v := range unionVariants(typ) {
			walk(v, path+"{"+v.Name()+"}")
		}
	}
	walk(typeOf[models.Update](), "update")
}

// TestUnionSpecsMatchTheLibrary checks each spec against the library's own
// decoder: every variant the spec knows decodes, and an unknown one is
// refused by both.
func TestUnionSpecsMatchTheLibrary(t *testing.T) {
	for typ, spec := range unions {
		t.Run(typ.Name(), func(t *testing.T) {
			if typ == typeOf[models.MaybeInaccessibleMessage]() {
				v, _, err := spec.pick([]byte(`{"date":0,"message_id":1,"chat":{"id":1,"type":"private"}}`))
				require.NoError(t, err)
				assert.Equal(t, typeOf[models.InaccessibleMessage](), v)
				v, _, err = spec.pick([]byte(`{"date":5,"message_id":1,"chat":{"id":1,"type":"private"}}`))
				require.NoError(t, err)
				assert.Equal(t, typeOf[models.Message](), v)
				_, _, err = spec.pick([]byte(`{"date":"soon"}`))
				assert.Error(t, err)
				return
			}
			key := discriminatorOf(typ)
			for _, disc := range knownDiscriminators(t, typ) {
				raw, _ := json.Marshal(map[string]string{key: disc})
				v, got, err := spec.pick(raw)
				require.NoError(t, err, disc)
				assert.Equal(t, disc, got)
				assert.NotNil(t, v)
				assert.NoError(t, decodeInto(raw, typ), "the library decodes %s", disc)
			}
			raw, _ := json.Marshal(map[string]string{key: "brand_new_kind"})
			_, _, err := spec.pick(raw)
			assert.Error(t, err)
			assert.Error(t, decodeInto(raw, typ), "the library refuses an unknown %s", key)
		})
	}
}

func discriminatorOf(t reflect.Type) string {
	switch t {
	case typeOf[models.ChatMember]():
		return "status"
	case typeOf[models.ChatBoostSource]():
		return "source"
	}
	return "type"
}

// knownDiscriminators are the values the library's decoder accepts, taken
// from its constants.
func knownDiscriminators(t *testing.T, typ reflect.Type) []string {
	t.Helper()
	known := map[reflect.Type][]string{
		typeOf[models.MessageOrigin]():          {"user", "hidden_user", "chat", "channel"},
		typeOf[models.PaidMedia]():              {"preview", "photo", "video"},
		typeOf[models.BackgroundType]():         {"fill", "wallpaper", "pattern", "chat_theme"},
		typeOf[models.BackgroundFill]():         {"solid", "gradient", "freeform_gradient"},
		typeOf[models.ReactionType]():           {"emoji", "custom_emoji", "paid"},
		typeOf[models.ChatMember]():             {"creator", "administrator", "member", "restricted", "left", "kicked"},
		typeOf[models.ChatBoostSource]():        {"premium", "gift_code", "giveaway"},
		typeOf[models.OwnedGift]():              {"regular", "unique"},
		typeOf[models.StoryAreaType]():          {"location", "suggested_reaction", "link", "weather", "unique_gift"},
		typeOf[models.TransactionPartner]():     {"user", "chat", "affiliate_program", "fragment", "telegram_ads", "telegram_api", "other"},
		typeOf[models.RevenueWithdrawalState](): {"pending", "succeeded", "failed"},
		typeOf[models.MenuButton]():             {"commands", "web_app", "default"},
	}[typ]
	require.NotEmpty(t, known, "no known discriminators listed for %s", typ)
	return known
}
