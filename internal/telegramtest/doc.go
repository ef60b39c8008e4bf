// Package telegramtest is an in-process fake of the Telegram Bot API for loopback
// tests. It serves /bot{token}/{method} on an httptest server on 127.0.0.1 and
// keeps real state: registered chats and forum topics, per-chat message ids
// shared by user and bot messages, a global update_id counter, long-polled
// getUpdates with offset confirmation, and the edit, delete and callback rules
// the bridge has to get right ("message is not modified", keyboard removal on
// edit, stale callback queries, 4096 UTF-16 units after HTML parsing), and
// drafts (sendMessageDraft) as the user sees them: private chats only, one
// per chat or topic, the latest, gone once a message or a chat action
// replaces it or after 30 s ([Server.ShownDraft]).
//
// Responses are built from the package's own wire structs, never from
// go-telegram/bot's models, so a test that decodes them with the real client
// checks two independent descriptions of the protocol against each other.
//
// createForumTopic makes a topic in a forum where the bot may manage topics
// ([Chat].BotCanManageTopics), and refuses as Telegram does otherwise ("the
// chat is not a forum", "not enough rights to create a topic"); the topics
// made are in [Snapshot].Topics. pinChatMessage and unpinChatMessage set
// [Message].Pinned: always in a private chat, in a group only where the
// bot may pin ([Chat].BotCanPin), refused otherwise as Telegram does.
//
// Tests drive the user side with [Server.UserSends], [Server.UserSendsPhoto],
// [Server.UserSendsDocument], [Server.UserSendsVoice], [Server.UserSendsAudio],
// [Server.UserSendsVideoNote], [Server.UserSendsAlbum] (one update per item,
// sharing a media_group_id), [Server.UserEdits] (an edited_message update),
// [Server.UserPresses] and [Server.UserDeletes] (which, as with Telegram,
// the bot is not told of); [Forwarded] and [Quoting] make a message a
// forward or a quoting reply. Files users send (and documents and photos the
// bot uploads) are fetched with getFile and downloaded from
// /file/bot{token}/{file_path}, as with the real service. The bot side
// includes sendDocument, sendPhoto (10 MB, width + height ≤ 10000, ratio ≤
// 20, 1024-unit captions) and sendMediaGroup (2–10 items, photos or
// documents but not both, attach:// parts; flood control that trips at
// item N > 1 leaves the items before it delivered and answers a 400 naming
// N, as Telegram does). Content no client
// knows yet, as a newer Telegram or a hostile server would send it, goes in
// raw: [WithRawFields] adds members to a user message, [Server.InjectRawUpdate]
// queues an update of any kind and [Server.InjectRaw] any getUpdates entry at
// all, each sent verbatim. Tests observe the
// bot side through [Server.Snapshot] and [Server.WaitFor], and provoke
// failures with flood-control emulation ([Server.EnableFloodControl]:
// [DefaultFloodLimits] lets a private chat burst 8 calls and then sustain
// one a second, with 20 a minute per group and 30 a second overall;
// [StrictFloodLimits] allows only 3 in any 3 s of a private chat, for tests
// that need Telegram to refuse bursts) and deterministic fault injection ([Server.FailNext], [Server.FailWhen],
// [Server.Delay], [Server.DropConnection]). Every call is logged with the fake
// clock's time so [Server.ViolationsOfRetryAfter] can prove that a chat was
// left alone while Telegram had told the bot to wait.
//
// Where the real service is undocumented the fake is deliberately stricter:
// lengths are counted in UTF-16 units (Telegram has been measured counting code
// points), a bare "&" in HTML is rejected by default, and a penalised chat
// refuses every method, not only sends.
package telegramtest
