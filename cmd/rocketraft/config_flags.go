package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rocketraft/rocketraft/config"
)

// configFlags are the configuration flags of `rocketraft broker` and
// `rocketraft namesrv`: the file, --set overrides and --print-config. The
// environment layer (ROCKETRAFT_<key>) is always on for both.
type configFlags struct {
	path  string
	set   []string
	print bool
}

func (c *configFlags) register(fs *pflag.FlagSet, file string) {
	fs.StringVarP(&c.path, "config", "c", "", file+" (Java properties or YAML)")
	// StringArray, not StringSlice: values hold commas and ';'-lists as they are.
	fs.StringArrayVar(&c.set, "set", nil, "override a key, key=value (repeatable; wins over the file and "+config.EnvPrefix+"<key> variables)")
	fs.BoolVar(&c.print, "print-config", false, "print the effective configuration and where each value came from, then exit")
}

// printConfig writes eff for --print-config.
func printConfig(w io.Writer, eff config.Effective) error {
	_, err := fmt.Fprint(w, eff.Text())
	return err
}
