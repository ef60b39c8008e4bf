package sshtest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestServerRunsCommandsAsTheCurrentUser(t *testing.T) {
	srv := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := srv.Run(ctx, "id -u")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out); got != strconv.Itoa(os.Geteuid()) {
		t.Fatalf("ran as uid %q, want %d", got, os.Geteuid())
	}
}
