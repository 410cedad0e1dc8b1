// Package main holds the rocketraft command line: subcommands namesrv, broker, dev,
// admin and bench. It parses flags and configuration files and hands them to the
// packages that do the work; no logic lives here.
package main
