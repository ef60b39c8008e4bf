package voice

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// SilentWAV is a WAV file of seconds of 16 kHz mono silence.
func SilentWAV(seconds float64) []byte {
	const rate = 16000
	n := int(seconds * rate)
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	_ = binary.Write(&b, le, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	_ = binary.Write(&b, le, uint32(16))
	_ = binary.Write(&b, le, uint16(1)) // PCM
	_ = binary.Write(&b, le, uint16(1)) // mono
	_ = binary.Write(&b, le, uint32(rate))
	_ = binary.Write(&b, le, uint32(2*rate))
	_ = binary.Write(&b, le, uint16(2))
	_ = binary.Write(&b, le, uint16(16))
	b.WriteString("data")
	_ = binary.Write(&b, le, uint32(2*n))
	b.Write(make([]byte, 2*n))
	return b.Bytes()
}

// Probe checks that t works by transcribing a second of silence. An empty
// transcript is a success: silence has no words.
func Probe(ctx context.Context, t Transcriber) error {
	_, err := t.Transcribe(ctx, Audio{Data: SilentWAV(1), Name: "probe.wav", MimeType: "audio/wav"})
	if err != nil && !errors.Is(err, ErrEmpty) {
		return fmt.Errorf("transcribe a second of silence: %w", err)
	}
	return nil
}
