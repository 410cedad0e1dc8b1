// Command rocketraft is the single binary: nameserver, broker node, local dev cluster,
// admin CLI and benchmark tool. It only parses flags and calls packages.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rocketraft:", err)
		os.Exit(1)
	}
}
