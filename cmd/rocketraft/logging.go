package main

import (
	"os"

	"github.com/hashicorp/go-hclog"
)

func newLogger(name, level string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:   name,
		Level:  hclog.LevelFromString(level),
		Output: os.Stderr,
	})
}
