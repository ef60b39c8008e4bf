package sshtest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestFishLikeServerReadsCommandsAsFishDoes(t *testing.T) {
	srv := Start(t, FishLike())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// In fish, \' inside single quotes is a quote: sh would print a\ and
	// then fail on the unterminated quote.
	out, err := srv.Run(ctx, `printf '[%s]' 'a\'b' ; printf '[%s]' second`)
	require.NoError(t, err)
	assert.Equal(t, "[a'b][second]", out)
	_, err = srv.Run(ctx, `echo $HOME`)
	assert.Error(t, err, "what fishlike does not implement is refused")
}
