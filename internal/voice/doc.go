// Package voice transcribes voice notes, audio files and video notes for
// the bridge. Two backends implement [Transcriber]:
//
//   - [Endpoint], an OpenAI-compatible /v1/audio/transcriptions endpoint
//     (OpenAI, Groq, a local whisper.cpp or faster-whisper server): the
//     audio goes as it came, in a multipart form with the model and
//     language;
//   - [Command], a local program: ffmpeg converts the audio to 16 kHz mono
//     WAV, the program gets that file's path in place of "{wav}" and prints
//     the transcript on stdout.
//
// Errors say what failed in words a user can act on; the API key never
// appears in them (it is sent only in the Authorization header). [Probe]
// tries a backend with a second of generated silence, for `untether check
// --online`.
package voice
