#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it.
#
#   scripts/test.sh [go test flags...]      e.g. scripts/test.sh -run RealCLI ./internal/runner
#   CLAUDE_VERSION=2.1.332 scripts/test.sh  the same against another CLI release
#
# 1. downloads Go modules, installs openssh-server when sshd is missing (the
#    remote-project tests run a real sshd on 127.0.0.1), and installs the Claude CLI (scripts/install-claude.sh): the
#    pinned version, or $CLAUDE_VERSION when set, which then also wins over a
#    $UNTETHER_CLAUDE_BIN left in the environment (the real-CLI tests check that the
#    binary they run is that version);
# 2. installs the Debian packages of the voice tests (espeak-ng, ffmpeg, pocketsphinx,
#    pocketsphinx-en-us) when missing, with apt-get (as root, or through sudo -n);
# 3. runs gofmt, go vet and `go test -race ./...` with UNTETHER_REQUIRE_REAL_CLAUDE=1
#    and UNTETHER_REQUIRE_VOICE_TOOLS=1, so the real-CLI and voice tests fail instead
#    of skipping if the CLI or the packages are missing;
# 4. does so inside a loopback-only network namespace when the machine allows it
#    (unshare -rn, or unshare -n as root), so no test can reach anything but 127.0.0.1/::1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ -z "${UNTETHER_IN_NETNS:-}" ]; then
  # The voice tests run a real pipeline of Debian packages (espeak-ng speaks,
  # ffmpeg encodes and converts, pocketsphinx listens): install what is
  # missing now, while the network is still there.
  missing=""
  for pkg in espeak-ng ffmpeg pocketsphinx pocketsphinx-en-us; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing="$missing $pkg"
    fi
  done
  if [ -n "$missing" ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
    echo "test.sh: installing$missing for the voice tests" >&2
    if ! command -v apt-get >/dev/null || ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing; } >&2; then
      echo "test.sh: WARNING: could not install$missing; the voice tests will fail" >&2
    fi
  fi
  go mod download
  # Before the network goes: apt needs it.
  if [ ! -x /usr/sbin/sshd ] && ! command -v sshd >/dev/null; then
    echo "test.sh: installing openssh-server for the remote-project tests" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
    if command -v apt-get >/dev/null; then
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y openssh-server >&2 ||
        { $sudo apt-get update >&2 && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y openssh-server >&2; } ||
        echo "test.sh: WARNING: could not install openssh-server; the remote-project tests will fail" >&2
    else
      echo "test.sh: WARNING: no apt-get to install openssh-server; the remote-project tests will fail" >&2
    fi
  fi
  if [ -n "${CLAUDE_VERSION:-}" ]; then
    UNTETHER_CLAUDE_BIN="$(scripts/install-claude.sh)"
    export CLAUDE_VERSION
  fi
  export UNTETHER_CLAUDE_BIN="${UNTETHER_CLAUDE_BIN:-$(scripts/install-claude.sh)}"
  echo "test.sh: Claude CLI ${CLAUDE_VERSION:-(pinned)}: $UNTETHER_CLAUDE_BIN" >&2
  # Build test binaries before dropping the network: the build cache and the
  # module cache are all the tests need afterwards.
  go test -race -count=1 -run '^$' ./... >/dev/null
  for try in "unshare -n" "unshare -rn"; do
    if command -v ip >/dev/null && $try true 2>/dev/null; then
      echo "test.sh: running tests in a loopback-only network namespace ($try)" >&2
      exec env UNTETHER_IN_NETNS=1 $try "$0" "$@"
    fi
  done
  echo "test.sh: WARNING: cannot create a network namespace; tests rely on the offline env only" >&2
fi
if [ -n "${UNTETHER_IN_NETNS:-}" ]; then
  ip link set lo up
fi
export UNTETHER_REQUIRE_REAL_CLAUDE=1
export UNTETHER_REQUIRE_VOICE_TOOLS=1  # internal/voice/voicefake: fail, not skip, without them
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
export GOPROXY=off  # inside the namespace nothing can be fetched anyway; fail fast

unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [ -n "$unformatted" ]; then
  echo "gofmt needed:" >&2; echo "$unformatted" >&2; exit 1
fi
go vet ./...
if [ $# -eq 0 ]; then
  set -- ./...
fi
go test -race -count=1 -timeout 30m "$@"
