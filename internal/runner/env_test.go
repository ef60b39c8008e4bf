package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildEnvInheritsOnlyTheAllowList(t *testing.T) {
	tests := []struct {
		name      string
		inherited []string
		extra     map[string]string
		want      []string
	}{
		{name: "allow-listed and prefixed pass",
			inherited: []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "XDG_CONFIG_HOME=/c", "XDG_DATA_HOME=/d"},
			want:      []string{"HOME=/h", "LC_ALL=C", "PATH=/bin", "XDG_CONFIG_HOME=/c", "XDG_DATA_HOME=/d"}},
		{name: "secrets are withheld",
			inherited: []string{"PATH=/bin", "UNTETHER_TELEGRAM_BOT_TOKEN=1:x", "AWS_SECRET_ACCESS_KEY=y", "SSH_AUTH_SOCK=/s"},
			want:      []string{"PATH=/bin"}},
		{name: "the session bus and runtime dir are withheld",
			inherited: []string{"PATH=/bin", "XDG_RUNTIME_DIR=/run/user/1000", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"},
			want:      []string{"PATH=/bin"}},
		{name: "the configured table still can set them",
			inherited: []string{"XDG_RUNTIME_DIR=/run/user/1000"},
			extra:     map[string]string{"XDG_RUNTIME_DIR": "/run/user/2000"},
			want:      []string{"XDG_RUNTIME_DIR=/run/user/2000"}},
		{name: "malformed entries are skipped",
			inherited: []string{"PATH", "=x", "HOME=/h"},
			want:      []string{"HOME=/h"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, BuildEnv(tt.inherited, tt.extra))
		})
	}
}
