#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it.
#
#   scripts/test.sh [go test flags...]      e.g. scripts/test.sh -run RealCLI ./internal/runner
#   CLAUDE_VERSION=2.1.332 scripts/test.sh  the same against another CLI release
#
# 1. installs the Claude CLI (scripts/install-claude.sh): the pinned version, or
#    $CLAUDE_VERSION when set, which then also wins over a $UNTETHER_CLAUDE_BIN
#    left in the environment (the real-CLI tests check that the binary they run
#    is that version); a set $UNTETHER_CLAUDE_BIN is used as it is;
# 2. installs with apt-get (as root, or through sudo -n) what the tests run for
#    real when it is missing: openssh-server (a real sshd on 127.0.0.1 for the
#    remote-project tests), espeak-ng, ffmpeg, pocketsphinx and
#    pocketsphinx-en-us (the voice pipeline), systemd (systemd-analyze verifies
#    the units); then downloads the Go modules. Any failed step stops the run
#    at once, naming it, before anything is built;
# 3. runs gofmt, go vet and `go test -race ./...` with UNTETHER_REQUIRE_REAL_CLAUDE=1,
#    UNTETHER_REQUIRE_VOICE_TOOLS=1 and UNTETHER_REQUIRE_SYSTEM_TOOLS=1, so those
#    tests fail instead of skipping if the CLI or the packages are missing;
# 4. does so inside a loopback-only network namespace when the machine allows it
#    (unshare -rn, or unshare -n as root), so no test can reach anything but 127.0.0.1/::1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# die stops the run at once: an install that failed would only make
# hundreds of tests fail later for one reason.
die() {
  echo "test.sh: $*" >&2
  exit 1
}

# as_root runs a command as root: directly, or through passwordless sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

# need_packages "command-or-path:package" ...: installs with apt-get the
# Debian packages whose command (or file) is missing, or stops the run.
need_packages() {
  local want missing=() what pkg
  for want in "$@"; do
    what="${want%%:*}" pkg="${want#*:}"
    if [ "${what#/}" != "$what" ]; then
      [ -e "$what" ] && continue
    elif command -v "$what" >/dev/null 2>&1; then
      continue
    fi
    missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "test.sh: installing ${missing[*]} (the tests run them for real)" >&2
  command -v apt-get >/dev/null ||
    die "cannot install ${missing[*]}: no apt-get on this machine; install them by hand and run again"
  if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; }; } >&2; then
    die "installing ${missing[*]} with apt-get failed (see above); it needs root or passwordless sudo, and a reachable Debian mirror"
  fi
}

if [ -z "${UNTETHER_IN_NETNS:-}" ]; then
  # Everything is installed before anything is built, while the network is
  # still there (the tests run without it), and each step stops the run
  # when it fails.
  #
  # 1. The Claude CLI the real-CLI tests run: the pinned version, or
  #    $CLAUDE_VERSION, which then wins over $UNTETHER_CLAUDE_BIN.
  if [ -n "${CLAUDE_VERSION:-}" ] || [ -z "${UNTETHER_CLAUDE_BIN:-}" ]; then
    if ! UNTETHER_CLAUDE_BIN="$(scripts/install-claude.sh)" || [ -z "$UNTETHER_CLAUDE_BIN" ]; then
      die "installing the Claude CLI @anthropic-ai/claude-code@${CLAUDE_VERSION:-<pinned>} failed (see above). It needs npm and access to the npm registry, and a writable ${UNTETHER_TOOLS_DIR:-.tools}; or set UNTETHER_CLAUDE_BIN to a claude binary of that version."
    fi
  fi
  [ -x "$UNTETHER_CLAUDE_BIN" ] || die "UNTETHER_CLAUDE_BIN=$UNTETHER_CLAUDE_BIN is not an executable file"
  export UNTETHER_CLAUDE_BIN
  if [ -n "${CLAUDE_VERSION:-}" ]; then export CLAUDE_VERSION; fi
  echo "test.sh: Claude CLI ${CLAUDE_VERSION:-(pinned)}: $UNTETHER_CLAUDE_BIN" >&2
  # 2. What else the tests run for real: sshd for the remote-project tests
  #    (on 127.0.0.1), the voice pipeline (espeak-ng speaks, ffmpeg encodes
  #    and converts, pocketsphinx listens), systemd-analyze for the units.
  need_packages /usr/sbin/sshd:openssh-server ssh-keygen:openssh-client \
    espeak-ng:espeak-ng ffmpeg:ffmpeg pocketsphinx_continuous:pocketsphinx \
    /usr/share/pocketsphinx/model/en-us:pocketsphinx-en-us systemd-analyze:systemd
  # 3. The Go modules.
  go mod download || die "downloading the Go modules failed (see above); it needs the Go module proxy"
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
export UNTETHER_REQUIRE_SYSTEM_TOOLS=1 # systemd-analyze: fail, not skip, without it
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
