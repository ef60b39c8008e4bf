#!/usr/bin/env bash
# install-claude.sh: installs the pinned Claude Code CLI that the real-CLI tests run against,
# into a git-ignored directory (.tools/claude). Idempotent: does nothing when the pinned
# version is already there. Prints the binary's path on stdout.
set -euo pipefail
CLAUDE_VERSION="${CLAUDE_VERSION:-2.1.328}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${UNTETHER_TOOLS_DIR:-$root/.tools}/claude-$CLAUDE_VERSION"
bin="$prefix/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
if [ ! -x "$bin" ]; then
  command -v npm >/dev/null || { echo "install-claude.sh: npm is required to install the Claude CLI" >&2; exit 1; }
  mkdir -p "$prefix" || { echo "install-claude.sh: cannot create $prefix" >&2; exit 1; }
  echo "installing @anthropic-ai/claude-code@$CLAUDE_VERSION into $prefix" >&2
  npm install --loglevel error --no-audit --no-fund --prefix "$prefix" "@anthropic-ai/claude-code@$CLAUDE_VERSION" >&2 ||
    { echo "install-claude.sh: npm install @anthropic-ai/claude-code@$CLAUDE_VERSION failed" >&2; exit 1; }
fi
[ -x "$bin" ] || { echo "install-claude.sh: $bin missing after install" >&2; exit 1; }
echo "$bin"
