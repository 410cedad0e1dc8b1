// Package config loads broker.conf and namesrv.conf (Java properties or YAML) with
// viper, applies defaults and validates every key at once, naming key, value and rule
// for each problem. It is the only package that sees viper and imports no project
// package.
package config
