package owndir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/untether/untether/internal/safefs"
)

// ErrTooBig marks an attachment over [files] max_upload_mb.
var ErrTooBig = errors.New("the file is too big")

// TooBig is ErrTooBig for a file over limitMB ([files] max_upload_mb).
func TooBig(limitMB int) error {
	return fmt.Errorf("%w: this bot accepts files up to %d MB ([files] max_upload_mb)", ErrTooBig, limitMB)
}

// SentName picks a new name in sent for a file called name: stamped, and
// never one that exists or that taken (names picked for files not moved
// there yet) holds; the name is added to taken. The move itself never
// replaces a file either (safefs.Dir.Rename), should a tool take the name
// meanwhile.
func SentName(sent *safefs.Dir, name string, now time.Time, taken map[string]bool) string {
	base, ext := UploadName(name)
	stamp := now.UTC().Format("20060102-150405")
	for i := 1; ; i++ {
		n := stamp + "-" + base + ext
		if i > 1 {
			n = stamp + "-" + base + "-" + strconv.Itoa(i) + ext
		}
		if _, err := sent.Lstat(n); (errors.Is(err, fs.ErrNotExist) && !taken[n]) || i >= 1000 {
			if taken != nil {
				taken[n] = true
			}
			return n
		}
	}
}

// CreateSent makes a new file in the workdir's Sent, for the files the
// bridge makes itself (a zip, a full diff): it returns the file, open for
// reading and writing, its path relative to the workdir, and the directory
// (to remove it on failure). What the bridge sends is that descriptor,
// whatever becomes of the name.
func CreateSent(workdir, name string, now time.Time) (*os.File, string, *safefs.Dir, error) {
	sent, err := Open(workdir, Sent, true)
	if err != nil {
		return nil, "", nil, err
	}
	n := SentName(sent, name, now, nil)
	f, err := sent.Create(n)
	if err != nil {
		sent.Close()
		return nil, "", nil, fmt.Errorf("create %s/%s: %w", Sent, n, err)
	}
	return f, Sent + "/" + n, sent, nil
}

// WriteSent writes data to a new file in the workdir's Sent (a full
// diff) and returns it open, with its path relative to the workdir.
func WriteSent(workdir, name string, data []byte, now time.Time) (*os.File, string, error) {
	f, rel, sent, err := CreateSent(workdir, name, now)
	if err != nil {
		return nil, "", err
	}
	defer sent.Close()
	if _, err := f.Write(data); err != nil {
		f.Close()
		_ = sent.Remove(path.Base(rel))
		return nil, "", fmt.Errorf("write %s: %w", rel, err)
	}
	return f, rel, nil
}
