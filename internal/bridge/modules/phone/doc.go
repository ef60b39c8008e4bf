// Package phone is what people send from a phone besides text: voice
// notes, audio files and video notes are transcribed by the [voice]
// backend in the hand-over goroutine (voice.go, internal/voice); photos and
// documents are passed to Claude, pictures inline and the rest saved
// under .untether/uploads (attachments.go); album parts and forwards
// (with a comment right after them) are collected into one prompt
// (batch.go); a reply quotes what it replies to (replies.go); and an
// edited message is never re-sent by itself, only through its ✏️ Send
// edited version button.
//
// Its message hooks run in this order, which is behaviour: collecting an
// album or forwards first, then the reply's quote (which the voice note
// and the attachment carry), then a voice note, then an attachment. A
// reply to an open question is answered by the engine before any of them.
package phone
