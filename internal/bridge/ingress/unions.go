package ingress

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/go-telegram/bot/models"
)

// unionSpec describes one of go-telegram/bot's union types: a struct with a
// hand-written UnmarshalJSON that picks a variant by a discriminator field
// ("type", "status" or "source") and fails on any value it does not know. A
// new variant in a Telegram release is therefore a decoding error, and in
// v1.19.0 one such error fails the whole getUpdates batch (upstream #90).
// The spec lets the repairer descend into a known variant (to repair what is
// inside it) and says what to do when the variant is unknown.
type unionSpec struct {
	// pick returns the variant type raw decodes as, and the discriminator
	// value for the log; an error means the library would reject raw.
	pick func(raw []byte) (reflect.Type, string, error)
	// substitute, when set, replaces an unreadable value with a known
	// variant instead of losing it: the fact it stood for survives.
	substitute func(raw []byte) []byte
}

// unions lists every union type of go-telegram/bot v1.19.0's models.
// TestUnionsCoverEveryDecoderInUpdate fails when a library upgrade makes a
// type with its own UnmarshalJSON reachable from models.Update without an
// entry here. Not all of them can reach the bridge today (OwnedGift,
// StoryAreaType, TransactionPartner, RevenueWithdrawalState and MenuButton
// appear only in method results); they are listed so an upgrade that moves
// one into a message is already handled.
var unions = map[reflect.Type]unionSpec{
	typeOf[models.MessageOrigin](): {
		pick: byField("type", map[string]reflect.Type{
			"user": typeOf[models.MessageOriginUser](), "hidden_user": typeOf[models.MessageOriginHiddenUser](),
			"chat": typeOf[models.MessageOriginChat](), "channel": typeOf[models.MessageOriginChannel](),
		}),
		substitute: genericOrigin,
	},
	typeOf[models.PaidMedia](): {pick: byField("type", map[string]reflect.Type{
		"preview": typeOf[models.PaidMediaPreview](), "photo": typeOf[models.PaidMediaPhoto](), "video": typeOf[models.PaidMediaVideo](),
	})},
	typeOf[models.BackgroundType](): {pick: byField("type", map[string]reflect.Type{
		"fill": typeOf[models.BackgroundTypeFill](), "wallpaper": typeOf[models.BackgroundTypeWallpaper](),
		"pattern": typeOf[models.BackgroundTypePattern](), "chat_theme": typeOf[models.BackgroundTypeChatTheme](),
	})},
	typeOf[models.BackgroundFill](): {pick: byField("type", map[string]reflect.Type{
		"solid": typeOf[models.BackgroundFillSolid](), "gradient": typeOf[models.BackgroundFillGradient](),
		"freeform_gradient": typeOf[models.BackgroundFillFreeformGradient](),
	})},
	typeOf[models.ReactionType](): {pick: byField("type", map[string]reflect.Type{
		"emoji": typeOf[models.ReactionTypeEmoji](), "custom_emoji": typeOf[models.ReactionTypeCustomEmoji](),
		"paid": typeOf[models.ReactionTypePaid](),
	})},
	typeOf[models.ChatMember](): {pick: byField("status", map[string]reflect.Type{
		"creator": typeOf[models.ChatMemberOwner](), "administrator": typeOf[models.ChatMemberAdministrator](),
		"member": typeOf[models.ChatMemberMember](), "restricted": typeOf[models.ChatMemberRestricted](),
		"left": typeOf[models.ChatMemberLeft](), "kicked": typeOf[models.ChatMemberBanned](),
	})},
	typeOf[models.ChatBoostSource](): {pick: byField("source", map[string]reflect.Type{
		"premium": typeOf[models.ChatBoostSourcePremium](), "gift_code": typeOf[models.ChatBoostSourceGiftCode](),
		"giveaway": typeOf[models.ChatBoostSourceGiveaway](),
	})},
	// The library tells a message from an inaccessible one by its date.
	typeOf[models.MaybeInaccessibleMessage](): {pick: pickMaybeInaccessible},
	typeOf[models.OwnedGift](): {pick: byField("type", map[string]reflect.Type{
		"regular": typeOf[models.OwnedGiftRegular](), "unique": typeOf[models.OwnedGiftUnique](),
	})},
	typeOf[models.StoryAreaType](): {pick: byField("type", map[string]reflect.Type{
		"location": typeOf[models.StoryAreaTypeLocation](), "suggested_reaction": typeOf[models.StoryAreaTypeSuggestedReaction](),
		"link": typeOf[models.StoryAreaTypeLink](), "weather": typeOf[models.StoryAreaTypeWeather](),
		"unique_gift": typeOf[models.StoryAreaTypeUniqueGift](),
	})},
	typeOf[models.TransactionPartner](): {pick: byField("type", map[string]reflect.Type{
		"user": typeOf[models.TransactionPartnerUser](), "chat": typeOf[models.TransactionPartnerChat](),
		"affiliate_program": typeOf[models.TransactionPartnerAffiliateProgram](),
		"fragment":          typeOf[models.TransactionPartnerFragment](), "telegram_ads": typeOf[models.TransactionPartnerTelegramAds](),
		"telegram_api": typeOf[models.TransactionPartnerTelegramApi](), "other": typeOf[models.TransactionPartnerOther](),
	})},
	typeOf[models.RevenueWithdrawalState](): {pick: byField("type", map[string]reflect.Type{
		"pending": typeOf[models.RevenueWithdrawalStatePending](), "succeeded": typeOf[models.RevenueWithdrawalStateSucceeded](),
		"failed": typeOf[models.RevenueWithdrawalStateFailed](),
	})},
	typeOf[models.MenuButton](): {pick: byField("type", map[string]reflect.Type{
		"commands": typeOf[models.MenuButtonCommands](), "web_app": typeOf[models.MenuButtonWebApp](),
		"default": typeOf[models.MenuButtonDefault](),
	})},
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// byField picks a variant by a string discriminator, read exactly as the
// library reads it (a struct field with that JSON name, so a number there
// is an error and the key matches case-insensitively).
func byField(key string, variants map[string]reflect.Type) func([]byte) (reflect.Type, string, error) {
	probe := reflect.StructOf([]reflect.StructField{{Name: "V", Type: typeOf[string](), Tag: reflect.StructTag(`json:"` + key + `"`)}})
	return func(raw []byte) (reflect.Type, string, error) {
		v := reflect.New(probe)
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			return nil, "", fmt.Errorf("read %s: %w", key, err)
		}
		disc := v.Elem().Field(0).String()
		if t, ok := variants[disc]; ok {
			return t, disc, nil
		}
		return nil, disc, fmt.Errorf("unknown %s %q", key, disc)
	}
}

func pickMaybeInaccessible(raw []byte) (reflect.Type, string, error) {
	var d struct {
		Date int `json:"date"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, "", fmt.Errorf("read date: %w", err)
	}
	if d.Date == 0 {
		return typeOf[models.InaccessibleMessage](), "inaccessible", nil
	}
	return typeOf[models.Message](), "message", nil
}

// genericOrigin stands in for a forward origin of a kind the library does not
// know: the message stays marked as forwarded (ForwardOrigin is set), from a
// sender the bridge cannot name, and its date is kept when readable.
func genericOrigin(raw []byte) []byte {
	var d struct {
		Date int `json:"date"`
	}
	_ = json.Unmarshal(raw, &d) // an unreadable date stays 0
	out, _ := json.Marshal(models.MessageOriginHiddenUser{Type: models.MessageOriginTypeHiddenUser, Date: d.Date})
	return out
}

// essential lists the fields an object cannot do without: when one of them
// cannot be read, the whole object is dropped rather than kept with a zero
// value that would route a message to chat 0, a press from user 0, or mark
// the wrong part of a text.
var essential = map[reflect.Type]map[string]bool{
	typeOf[models.Update]():              {"update_id": true},
	typeOf[models.Message]():             {"message_id": true, "chat": true},
	typeOf[models.InaccessibleMessage](): {"message_id": true, "chat": true},
	typeOf[models.Chat]():                {"id": true, "type": true},
	typeOf[models.User]():                {"id": true},
	// A press whose message cannot be read comes from an unknown chat: the
	// bridge could only refuse it, and "not allowed" would be untrue.
	typeOf[models.CallbackQuery](): {"id": true, "from": true, "message": true},
	// An entity moved to offset 0 could turn the start of a text into a
	// command.
	typeOf[models.MessageEntity](): {"type": true, "offset": true, "length": true},
}
