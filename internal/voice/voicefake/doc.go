// Package voicefake is an in-repo fake of an OpenAI-compatible
// transcription endpoint (POST /v1/audio/transcriptions) for loopback
// tests. It checks what a real one would refuse (the bearer key, the
// multipart form, a model, a non-empty file), records every request with
// its audio bytes, answers a transcript chosen by the test, and fails or
// stalls on demand.
package voicefake
