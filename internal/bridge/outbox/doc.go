// Package outbox is the single writer for every Telegram message the daemon
// sends, edits or deletes, and for its typing indicators.
//
// Telegram punishes bursts with 429 penalties that grow when ignored, and the
// Python Untether lost final answers and approval prompts in exactly those
// storms. So nothing else in the daemon calls sendMessage, editMessageText,
// deleteMessage or sendChatAction: callers enqueue operations here and learn
// the outcome asynchronously through a [Pending].
//
// Per chat the outbox keeps two FIFO queues. High priority (approval prompts,
// final answers, error notices, decision edits) always runs before low
// priority (progress edits), and typing runs only when nothing else is
// waiting. Edits of one [Message] coalesce, latest wins, and an edit whose
// content equals what the message already shows is never sent. An edit of a
// message whose (unjournaled) send still waits in its queue goes out with
// the send, and a message deleted before its send went out is never sent,
// so a busy outbox spends no calls on content nobody would see. Calls are
// paced per chat, sends, edits and deletes together: a private chat is a
// token bucket (6 calls at once, then one per 1.05 s) of which progress
// edits leave four to answers and approvals, so the parts of a long answer
// go out together; a group is a sliding window (19 calls in 60.8 s) of
// which progress edits leave one. Over all chats there is a global sliding
// window (30 calls a second), in which each call counts from
// its send until a full second after its response: Telegram counts a call
// when it arrives, which cannot be later, so no margin for network or CPU
// delay is needed (a call still unanswered after 5 s is taken to have
// arrived by then, so hanging calls cannot hold the window shut). In it an
// album takes one slot per item, as Telegram counts them. When the global budget is short, its slots go to
// high-priority work first (in the order it was queued, all at once if
// they fit), then to the chat whose progress has been stale the longest.
// Typing and drafts take no message slot: they go only while the window is
// under a sixth full, at most a sixth of its size per second. A chat makes
// one call at a time, except that a progress edit in flight for longer
// than OvertakeAfter (1 s) counts as hanging: the chat's answers and
// approvals then go out beside it instead of waiting for its timeout.
//
// A 429 pauses only the chat it came from, for retry_after plus jitter, and
// the same operation is retried afterwards. A private chat that drew one
// bursts less for a while: its bucket is halved, down to one call, for
// 10 minutes after its latest 429, also across its worker retiring. Network errors and 5xx answers
// are retried with exponential backoff, capped at 5 s for high-priority
// work and 30 s for progress edits, until [Outbox.Close] gives up. A
// successful call anywhere (in another chat, the bridge's getUpdates
// reported through [Outbox.Reachable], or the outbox's own getMe probe,
// made every second while calls fail) ends the backoff of every chat whose
// failure came before that call was sent, so how long Telegram was down
// does not decide how long answers wait once it is back. A chat's backoff
// is ended that way at most once per 5 s, so a chat whose calls fail for
// reasons of its own keeps backing off.
//
// Telegram's 400s are turned into something useful where possible: "not
// modified" is success, an edit target that is gone becomes a new message, a
// parse error is resent as plain text, and an over-long text is split. A
// message that only mirrors state, which the user may delete to be rid of
// (a control panel), opts out of the resend with [Message.NoReplace]: an
// edit that finds it gone resolves with [OutcomeGone] instead, and the
// caller forgets it.
//
// Drafts ([Outbox.Draft], Bot API sendMessageDraft, private chats only)
// stream a reply as it is written. They bypass the chat queues: they spend
// none of the chat's message budget, are paced per chat on their own (the
// latest text wins), go only when the global budget has room to spare
// (taking none of its message slots), and a 429 on a draft pauses only
// drafts, while a 429 on the chat's messages pauses its drafts as well
// (one already on its way when the 429 arrives still goes). A sendMessage
// waits briefly for the call of an ended
// draft still in flight, so a draft never reappears below the answer that
// replaced it. A chat whose Telegram refuses a draft gets no more.
//
// High-priority sends can be journaled through a [Journal] before their first
// attempt so that a crash does not lose them; [Outbox.Restore] replays them at
// startup. Delivery is therefore at least once: a crash between Telegram
// accepting a message and the journal recording it replays it.
//
// [Outbox.SendMedia] sends files from disk the same way: a document, a
// photo, or an album of either (sendMediaGroup), journaled like text. A
// file the caller checked is handed over open and sent from that
// descriptor, never opened again by its path (which a tool may have turned
// into a FIFO or a link to a secret meanwhile); only a send replayed from
// the journal opens its path, through internal/safefs, which follows no
// link and refuses anything but a regular file without blocking. A
// flood-control error in the middle of an album (a 400 naming item N) is
// read as a 429 for the items from N on, since Telegram keeps the ones
// before it.
//
// [Outbox.Close] is bounded by its context: once it ends, calls in flight
// are cancelled, and a worker that still does not return within
// [CloseGrace] (a call stuck where cancellation cannot reach) is given up
// on; what it held stays journaled.
//
// Answering callback queries deliberately does not go through the outbox: it
// must happen within seconds, never behind pacing (Untether #247, #546).
//
// Typical use by a chat actor:
//
//	progress := ob.Send(ctx, key, outbox.Low, outbox.Content{Text: "<i>Working…</i>"}, outbox.SendOptions{})
//	ob.Edit(ctx, progress, outbox.Low, outbox.Content{Text: rendered, Keyboard: cancelRow}) // many times
//	final := ob.Send(ctx, key, outbox.High, outbox.Content{Text: answer}, outbox.SendOptions{Tag: "final:" + turn})
//	ob.Delete(ctx, progress, outbox.High)
//	res, err := final.Sent().Wait(ctx) // res.MessageID is the answer's id
package outbox
