# Convenience targets; each is one command from the README.
.PHONY: build test flakes flakes-fresh bench run conformance

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)

# Static (CGO_ENABLED=0): nothing in untether uses cgo, and a cgo build maps
# the C library into the daemon for nothing (1.5-1.8 MB of peak RSS,
# BENCHMARKS.md "Issue 25 §3").
build:
	CGO_ENABLED=0 go build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)" -o untether ./cmd/untether

test:
	scripts/test.sh

# Every fast package 10 times shuffled, the real-CLI ones 3 times; lists each
# test that failed at least once.
flakes:
	scripts/flakes.sh

# The README's test command from a fresh clone of HEAD, FRESH times in a row
# (5 by default), each installing everything from nothing: what a new user
# sees.
FRESH ?= 5
flakes-fresh:
	scripts/fresh-clones.sh $(FRESH)

# Every test of the packages that start the real CLI (runner, claudetest,
# bridge full stack, the resume line, the login relay, the transcript reader, daemon subprocess
# tests), the transcript replay, and all
# TestRealCLIConformance scenarios, against one CLI release, through
# scripts/test.sh (so inside the loopback-only namespace):
#   make conformance CLAUDE_VERSION=2.1.332
# Without CLAUDE_VERSION it checks the pinned version.
CONFORMANCE_PKGS := ./cmd/untether ./internal/bridge ./internal/handoff ./internal/login ./internal/runner ./internal/runner/claudetest ./internal/transcript
conformance:
	scripts/test.sh -timeout 40m $(CONFORMANCE_PKGS)

bench:
	go test -run '^$$' -bench . -benchtime 20x ./internal/runner ./internal/render ./internal/bridge/outbox ./internal/bridge/state
