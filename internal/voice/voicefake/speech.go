package voicefake

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The command backend is tested with a real pipeline of Debian packages,
// no fakes: espeak-ng speaks, ffmpeg encodes OGG/Opus as Telegram clients
// record voice notes, and pocketsphinx (with pocketsphinx-en-us) listens.
// scripts/test.sh installs them; a plain `go test` skips these tests when
// they are missing, unless EnvRequireTools is set.

// EnvRequireTools makes a missing tool fail the test instead of skipping it.
const EnvRequireTools = "UNTETHER_REQUIRE_VOICE_TOOLS"

// Tools are the programs the real pipeline needs.
var Tools = []string{"espeak-ng", "ffmpeg", "pocketsphinx_continuous"}

// RequireTools skips (or, with EnvRequireTools, fails) the test when one
// of the programs is not installed.
func RequireTools(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv(EnvRequireTools) != "" {
				t.Fatalf("%s is not installed (apt-get install espeak-ng ffmpeg pocketsphinx pocketsphinx-en-us)", n)
			}
			t.Skipf("%s is not installed; scripts/test.sh installs it", n)
		}
	}
}

// SpokenOGG speaks sentence with espeak-ng and encodes it as OGG/Opus, the
// format of Telegram voice notes.
func SpokenOGG(t testing.TB, sentence string) []byte {
	t.Helper()
	RequireTools(t, "espeak-ng", "ffmpeg")
	dir := t.TempDir()
	wav, ogg := filepath.Join(dir, "s.wav"), filepath.Join(dir, "s.ogg")
	for _, argv := range [][]string{
		{"espeak-ng", "-s", "130", "-w", wav, sentence},
		{"ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", wav, "-c:a", "libopus", "-b:a", "24k", "-ac", "1", ogg},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", argv[0], err, out)
		}
	}
	data, err := os.ReadFile(ogg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// digitsGrammar limits pocketsphinx to spoken digits: the general English
// model mishears espeak-ng's synthetic voice, while digits come out right,
// and a wrong digit still fails the test.
const digitsGrammar = `#JSGF V1.0;
grammar digits;
public <digits> = ( zero | one | two | three | four | five | six | seven | eight | nine )+ ;
`

// PocketsphinxCommand is a [voice] command that transcribes spoken digits
// with pocketsphinx: its grammar file is written to a temporary directory.
func PocketsphinxCommand(t testing.TB) []string {
	t.Helper()
	RequireTools(t, "pocketsphinx_continuous")
	gram := filepath.Join(t.TempDir(), "digits.gram")
	if err := os.WriteFile(gram, []byte(digitsGrammar), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"pocketsphinx_continuous", "-jsgf", gram, "-logfn", "/dev/null", "-infile", "{wav}"}
}

// SaysInOrder reports whether words appear in text in that order, other
// words between them allowed: recognisers insert words, rarely drop them.
func SaysInOrder(text string, words ...string) bool {
	heard := strings.Fields(strings.ToLower(text))
	i := 0
	for _, w := range heard {
		if i < len(words) && w == words[i] {
			i++
		}
	}
	return i == len(words)
}
