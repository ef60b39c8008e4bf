package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// GitHub's delivery headers.
const (
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the
	// body keyed with the webhook's secret.
	SignatureHeader = "X-Hub-Signature-256"
	// DeliveryHeader is the delivery's GUID, the same on a redelivery.
	DeliveryHeader = "X-GitHub-Delivery"
	// EventHeader names the event (workflow_run, issues, ping, …).
	EventHeader = "X-GitHub-Event"
)

const signaturePrefix = "sha256="

// Sign returns the X-Hub-Signature-256 value of body under secret, as
// GitHub computes it (for senders and tests).
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// verify checks header, an X-Hub-Signature-256 value, against body: ""
// when it is right, else what is wrong (for the log, never the expected
// value). The comparison of the MACs takes the same time wherever they
// differ.
func verify(secret string, body []byte, header string) string {
	if header == "" {
		return "no " + SignatureHeader + " header"
	}
	hexSig, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok {
		return SignatureHeader + " does not start with " + signaturePrefix
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return SignatureHeader + " is not 64 hex digits"
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return "the signature does not match the body and the trigger's secret"
	}
	return ""
}
