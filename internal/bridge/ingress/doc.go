// Package ingress is the way in from Telegram, before any chat sees an
// update. Telegram is treated as hostile input, like the CLI's stream:
//
//   - the update guard (Loop.Transport, guard.go, repair.go, unions.go)
//     stands between getUpdates and go-telegram/bot's decoder: each update
//     is decoded on its own, and one the library cannot decode (a union
//     variant it does not know, a value of the wrong type) is repaired by
//     dropping or replacing only the unreadable parts, so the user's text
//     still gets through; one that cannot be repaired reaches the bridge as
//     its bare id and is skipped with a log line (Note). No update can stop
//     polling or hold back the offset. A message's Note also carries the
//     update as the library decoded it (Note.Raw), which the bridge keeps
//     until the message is handled: a re-encoding of the library's model
//     would lose what it decodes but cannot encode;
//   - liveness (Loop.Check, Loop.Trouble, progress.go) counts a poll only
//     once its updates are routed or skipped, for the systemd watchdog and
//     STATUS=;
//   - the transport sees every Bot API call the daemon makes, so it is
//     where they are counted by method and status (Loop.SetObserver,
//     calls.go); it knows when getUpdates last succeeded, and stamps each
//     update's Note with when its response was read, for the metrics;
//   - Offsets confirms an update to Telegram only when every earlier one is
//     handled, and remembers the ones done beyond that, so a restart never
//     handles an update twice;
//   - ConflictStreak follows 409 Conflicts (another poller on the token);
//   - ServiceOf and Note.Service name a service message (a pin, a member
//     joining, a topic opened, a video chat), from the decoded message and
//     from the raw update, which also holds what the library cannot decode;
//     the bridge neither answers nor forwards those (service.go);
//   - ReadableOf fills in the text of what the library leaves without any:
//     a rich message (Bot API 10.1, read from the raw update, rich.go), a
//     checklist, and the message a reply quotes; a reply to one checklist
//     task quotes that task. It names what it cannot pass on (a photo in a
//     rich message) so the user can be told;
//   - ParseCommand reads a bot command by UTF-16 offsets, as Telegram counts
//     them (the library's own matcher slices bytes).
package ingress
