// Package webhook serves POST /hooks/{name}: a delivery for one of the
// [[triggers]] becomes a prompt, handed to a Firer that runs it in the
// trigger's chat.
//
// A delivery is checked in an order that spends nothing on strangers: the
// name must be a trigger's (404), the body at most MaxBody bytes (413), the
// body signed with the trigger's secret in GitHub's convention,
// X-Hub-Signature-256: sha256=<hex of HMAC-SHA256(secret, body)>, compared
// in constant time (401), and JSON (or GitHub's form encoding,
// payload=<JSON>) (400). GitHub's ping, sent when a webhook is created, is
// answered and runs nothing. A replay runs once: a delivery whose
// X-GitHub-Delivery, or whose body (by its SHA-256), was already accepted
// for the trigger within the replay window is answered 200 and not run
// again. The body hash matters because the delivery id is not signed: an
// attacker who captured a signed delivery could send it again under a new
// id. What was seen is kept in a Seen store, in memory by default (bounded
// in entries and time); the daemon's is the state database (the bridge's
// triggers module), which catches a replay across a restart too.
//
// The prompt is the trigger's template rendered over the body
// (internal/service/hookprompt: a missing key renders empty, nothing in a
// body makes it fail), cut at MaxPrompt bytes with a note saying so. The
// Firer's answer decides the status: nil is 202 Accepted; ErrUnavailable
// (the chat cannot take work now, e.g. the daemon is draining) is 503 with
// Retry-After, and the delivery is forgotten so that the sender's retry
// runs; any other error is 500. A Seen store that cannot record the
// delivery now (ErrUnavailable: a full disk) gets the same 503.
//
// Refused deliveries are logged at most once a minute per trigger (names
// that are no trigger share one allowance), with how many were not logged
// since; neither the body, nor the signature, nor the secret is logged.
package webhook
