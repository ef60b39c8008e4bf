package chat

import (
	"context"
	"time"

	"github.com/untether/untether/internal/bridge/owndir"
)

// startUploadPruner prunes old uploads now and then once a day, with the
// [files] keep of the moment (it is reloadable).
func (b *Engine) startUploadPruner(ctx context.Context) (stop func()) {
	return b.daily(ctx, func(now time.Time) {
		cfg := b.Config()
		for _, dir := range projectDirs(cfg) { // projects.go
			n, err := owndir.PruneUploads(dir, cfg.Files.Keep.Std(), now)
			if b.ownDirs.Refused(err) {
				continue // logged once; nothing is pruned through it
			}
			if err != nil {
				b.log.Warn().Err(err).Msg("prune old uploads")
			} else if n > 0 {
				b.log.Info().Int("files", n).Dur("keep", cfg.Files.Keep.Std()).Msg("pruned old uploads")
			}
		}
		b.prunePhone(cfg) // files_out.go
	})
}
