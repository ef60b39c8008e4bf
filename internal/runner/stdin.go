package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A malformed stdin line kills the CLI at once (exit 1, cli-probe §2), so
// every line is built here from typed values, marshalled by encoding/json
// and checked again before it is written.

// Image is a picture attached to a user message.
type Image struct {
	MediaType string // image/png, image/jpeg, image/gif or image/webp
	Data      []byte
}

// UserInput is one user message.
type UserInput struct {
	Text   string
	Images []Image
}

// Behavior is the answer to a can_use_tool request.
type Behavior string

// The two answers the CLI accepts.
const (
	Allow Behavior = "allow"
	Deny  Behavior = "deny"
)

// Decision answers an ApprovalRequested.
type Decision struct {
	Behavior Behavior
	// UpdatedInput replaces the tool input on allow; nil echoes the request's
	// own input (the CLI expects an input on every allow).
	UpdatedInput json.RawMessage
	// UpdatedPermissions are permission rules to add on allow, typically the
	// request's permission_suggestions ("always allow").
	UpdatedPermissions json.RawMessage
	// Message is shown to the model on deny.
	Message string
	// Interrupt ends the turn on deny instead of letting the model go on.
	Interrupt bool
}

// ErrInvalidInput marks a stdin line that was refused before writing.
var ErrInvalidInput = errors.New("invalid CLI input")

var allowedImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoding/json writes []byte as base64
}

type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

type userLine struct {
	Type            string      `json:"type"`
	Message         userMessage `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	UUID            MessageUUID `json:"uuid"`
}

type userMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

func encodeUser(id MessageUUID, in UserInput) ([]byte, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: user message without uuid", ErrInvalidInput)
	}
	if in.Text == "" && len(in.Images) == 0 {
		return nil, fmt.Errorf("%w: empty user message", ErrInvalidInput)
	}
	var content any = in.Text
	if len(in.Images) > 0 {
		blocks := make([]any, 0, len(in.Images)+1)
		for _, img := range in.Images {
			if !allowedImageTypes[img.MediaType] || len(img.Data) == 0 {
				return nil, fmt.Errorf("%w: image of type %q (%d bytes)", ErrInvalidInput, img.MediaType, len(img.Data))
			}
			blocks = append(blocks, imageBlock{Type: "image", Source: imageSource{Type: "base64", MediaType: img.MediaType, Data: img.Data}})
		}
		if in.Text != "" {
			blocks = append(blocks, textBlock{Type: "text", Text: in.Text})
		}
		content = blocks
	}
	return marshalLine(userLine{Type: "user", Message: userMessage{Role: "user", Content: content}, UUID: id})
}

type controlResponseLine struct {
	Type     string          `json:"type"`
	Response controlResponse `json:"response"`
}

type controlResponse struct {
	Subtype   string    `json:"subtype"`
	RequestID RequestID `json:"request_id"`
	Response  any       `json:"response,omitempty"`
	Error     string    `json:"error,omitempty"`
}

type permissionAllow struct {
	Behavior           Behavior        `json:"behavior"`
	UpdatedInput       json.RawMessage `json:"updatedInput"`
	UpdatedPermissions json.RawMessage `json:"updatedPermissions,omitempty"`
}

type permissionDeny struct {
	Behavior  Behavior `json:"behavior"`
	Message   string   `json:"message"`
	Interrupt bool     `json:"interrupt,omitempty"`
}

func encodeDecision(id RequestID, d Decision, requestInput json.RawMessage) ([]byte, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: decision without request id", ErrInvalidInput)
	}
	var body any
	switch d.Behavior {
	case Allow:
		in := d.UpdatedInput
		if len(in) == 0 {
			in = requestInput
		}
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		if !isJSONObject(in) {
			return nil, fmt.Errorf("%w: updatedInput must be a JSON object", ErrInvalidInput)
		}
		if len(d.UpdatedPermissions) > 0 && !isJSONArray(d.UpdatedPermissions) {
			return nil, fmt.Errorf("%w: updatedPermissions must be a JSON array", ErrInvalidInput)
		}
		body = permissionAllow{Behavior: Allow, UpdatedInput: in, UpdatedPermissions: d.UpdatedPermissions}
	case Deny:
		msg := d.Message
		if msg == "" {
			msg = "The user denied this action."
		}
		body = permissionDeny{Behavior: Deny, Message: msg, Interrupt: d.Interrupt}
	default:
		return nil, fmt.Errorf("%w: behavior %q", ErrInvalidInput, d.Behavior)
	}
	return marshalLine(controlResponseLine{Type: "control_response",
		Response: controlResponse{Subtype: "success", RequestID: id, Response: body}})
}

func encodeControlError(id RequestID, msg string) ([]byte, error) {
	return marshalLine(controlResponseLine{Type: "control_response",
		Response: controlResponse{Subtype: "error", RequestID: id, Error: msg}})
}

type controlRequestLine struct {
	Type      string         `json:"type"`
	RequestID RequestID      `json:"request_id"`
	Request   map[string]any `json:"request"`
}

func encodeControlRequest(id RequestID, subtype string, fields map[string]any) ([]byte, error) {
	req := map[string]any{"subtype": subtype}
	for k, v := range fields {
		req[k] = v
	}
	return marshalLine(controlRequestLine{Type: "control_request", RequestID: id, Request: req})
}

// marshalLine encodes v as one line and checks what the CLI will parse:
// valid JSON, an object, no raw newline (which would split the line).
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if !json.Valid(b) || !isJSONObject(b) || bytes.IndexByte(b, '\n') >= 0 {
		return nil, fmt.Errorf("%w: encoded line is not a single JSON object", ErrInvalidInput)
	}
	return b, nil
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}

func isJSONArray(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '[' && json.Valid(b)
}
