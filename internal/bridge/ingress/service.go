package ingress

import (
	"encoding/json"

	"github.com/go-telegram/bot/models"
)

// Service messages are what Telegram writes into a chat about the chat: a
// pin, a member joining, a new title, a forum topic opened, a video chat
// started. Nobody wrote them to the bot, so they are never answered and
// never reach Claude (issue 24 §3). Only content a person sent that
// untether cannot use (a sticker, a location, a poll) is answered "not
// supported".

// serviceFields are the members of a Bot API Message that make it a service
// message (core.telegram.org/bots/api#message, as of Bot API 9.x). Some
// are decoded by go-telegram/bot v1.19 and some are not (it knows the
// video chat members only by their old voice_chat_* names), so the raw
// update is read too: what the library drops still tells what the message
// is.
var serviceFields = map[string]bool{
	"new_chat_members": true, "left_chat_member": true,
	"new_chat_title": true, "new_chat_photo": true, "delete_chat_photo": true,
	"group_chat_created": true, "supergroup_chat_created": true, "channel_chat_created": true,
	"message_auto_delete_timer_changed": true,
	"migrate_to_chat_id":                true, "migrate_from_chat_id": true,
	"pinned_message":     true,
	"successful_payment": true, "refunded_payment": true,
	"users_shared": true, "chat_shared": true,
	"gift": true, "unique_gift": true, "gift_upgrade_sent": true,
	"connected_website": true, "write_access_allowed": true, "passport_data": true,
	"proximity_alert_triggered": true, "boost_added": true, "chat_background_set": true,
	"checklist_tasks_done": true, "checklist_tasks_added": true,
	"direct_message_price_changed": true, "paid_message_price_changed": true,
	"forum_topic_created": true, "forum_topic_edited": true, "forum_topic_closed": true, "forum_topic_reopened": true,
	"general_forum_topic_hidden": true, "general_forum_topic_unhidden": true,
	"giveaway_created": true, "giveaway_completed": true,
	"chat_owner_left": true, "chat_owner_changed": true,
	"suggested_post_approved": true, "suggested_post_approval_failed": true, "suggested_post_declined": true,
	"suggested_post_paid": true, "suggested_post_refunded": true,
	"video_chat_scheduled": true, "video_chat_started": true, "video_chat_ended": true, "video_chat_participants_invited": true,
	"voice_chat_scheduled": true, "voice_chat_started": true, "voice_chat_ended": true, "voice_chat_participants_invited": true,
	// Data a Web App sent on the user's behalf is not a message to Claude
	// either; untether offers no Web App.
	"web_app_data": true,
}

// serviceOfRaw is the first service member of a raw message, "" if none.
func serviceOfRaw(raw json.RawMessage) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return ""
	}
	for k, v := range members {
		if serviceFields[k] && string(v) != "null" && string(v) != "false" {
			return k
		}
	}
	return ""
}

// ServiceOf names the service member of a decoded message ("pinned_message",
// "new_chat_members", …), or "" for a message a person wrote. It sees what
// the library decoded; a polled update's Note also knows the members the
// library could not decode ([Note.Service]).
func ServiceOf(m *models.Message) string {
	if m == nil {
		return ""
	}
	checks := []struct {
		name string
		set  bool
	}{
		{"new_chat_members", len(m.NewChatMembers) > 0}, {"left_chat_member", m.LeftChatMember != nil},
		{"new_chat_title", m.NewChatTitle != ""}, {"new_chat_photo", len(m.NewChatPhoto) > 0},
		{"delete_chat_photo", m.DeleteChatPhoto}, {"group_chat_created", m.GroupChatCreated},
		{"supergroup_chat_created", m.SupergroupChatCreated}, {"channel_chat_created", m.ChannelChatCreated},
		{"message_auto_delete_timer_changed", m.MessageAutoDeleteTimerChanged != nil},
		{"migrate_to_chat_id", m.MigrateToChatID != 0}, {"migrate_from_chat_id", m.MigrateFromChatID != 0},
		{"pinned_message", m.PinnedMessage != nil},
		{"successful_payment", m.SuccessfulPayment != nil}, {"refunded_payment", m.RefundedPayment != nil},
		{"users_shared", m.UsersShared != nil}, {"chat_shared", m.ChatShared != nil},
		{"gift", m.Gift != nil}, {"unique_gift", m.UniqueGift != nil}, {"gift_upgrade_sent", m.GiftUpgradeSent != nil},
		{"connected_website", m.ConnectedWebsite != ""}, {"write_access_allowed", m.WriteAccessAllowed != nil},
		{"passport_data", m.PassportData != nil}, {"proximity_alert_triggered", m.ProximityAlertTriggered != nil},
		{"boost_added", m.BoostAdded != nil}, {"chat_background_set", m.ChatBackgroundSet != nil},
		{"checklist_tasks_done", m.ChecklistTasksDone != nil}, {"checklist_tasks_added", m.ChecklistTasksAdded != nil},
		{"direct_message_price_changed", m.DirectMessagePriceChanged != nil},
		{"paid_message_price_changed", m.PaidMessagePriceChanged != nil},
		{"forum_topic_created", m.ForumTopicCreated != nil}, {"forum_topic_edited", m.ForumTopicEdited != nil},
		{"forum_topic_closed", m.ForumTopicClosed != nil}, {"forum_topic_reopened", m.ForumTopicReopened != nil},
		{"general_forum_topic_hidden", m.GeneralForumTopicHidden != nil},
		{"general_forum_topic_unhidden", m.GeneralForumTopicUnhidden != nil},
		{"giveaway_created", m.GiveawayCreated != nil}, {"giveaway_completed", m.GiveawayCompleted != nil},
		{"chat_owner_left", m.ChatOwnerLeft != nil}, {"chat_owner_changed", m.ChatOwnerChanged != nil},
		{"suggested_post_approved", m.SuggestedPostApproved != nil},
		{"suggested_post_approval_failed", m.SuggestedPostApprovalFailed != nil},
		{"suggested_post_declined", m.SuggestedPostDeclined != nil},
		{"suggested_post_paid", m.SuggestedPostPaid != nil}, {"suggested_post_refunded", m.SuggestedPostRefunded != nil},
		{"voice_chat_scheduled", m.VoiceChatScheduled != nil}, {"voice_chat_started", m.VoiceChatStarted != nil},
		{"voice_chat_ended", m.VoiceChatEnded != nil},
		{"voice_chat_participants_invited", m.VoiceChatParticipantsInvited != nil},
		{"web_app_data", m.WebAppData != nil},
	}
	for _, c := range checks {
		if c.set {
			return c.name
		}
	}
	return ""
}

// Service names the service member the raw update's message carried, ""
// if it is a message a person wrote (or not a message).
func (n Note) Service() string { return n.service }
