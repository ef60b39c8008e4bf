// Package config loads untether's single TOML file: it decodes strictly
// (unknown keys are errors), applies named defaults, and validates everything
// at once so a user sees every problem in one run. Components receive typed
// values, never the file.
package config
