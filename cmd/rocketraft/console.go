package main

import (
	"context"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/console"
	"github.com/rocketraft/rocketraft/internal/admin"
)

// DefaultConsoleListen is where `rocketraft console` and `rocketraft dev`
// serve the web console.
const DefaultConsoleListen = "127.0.0.1:8080"

type consoleFlags struct {
	namesrv  string
	listen   string
	timeout  time.Duration
	logLevel string
	creds    credentialFlags
	tls      clientTLSFlags
}

func newConsoleCommand() *cobra.Command {
	f := &consoleFlags{}
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve the web console: cluster, leadership timeline, topics, groups, messages, raft operations",
		Long: "Serve the web console over HTTP. With --access-key/--secret-key (an admin account; or $" + envAccessKey +
			"/$" + envSecretKey + ") users must log in with an ACL account and only admins may change anything.",
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.namesrv, "namesrv", shortNamesrv, admin.DefaultNamesrv, "nameserver addresses, ';'-separated")
	fs.StringVar(&f.listen, "listen", DefaultConsoleListen, "HTTP address to serve the console on")
	fs.DurationVar(&f.timeout, "timeout", 3*time.Second, "timeout of one request to the cluster")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	f.creds.register(fs)
	f.tls.register(fs, true)
	cmd.SetFlagErrorFunc(flagErrorHint)
	return cmd
}

func (f *consoleFlags) run(cmd *cobra.Command) error {
	var addrs []string
	for _, a := range strings.Split(f.namesrv, ";") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	tlsCfg, err := f.tls.config()
	if err != nil {
		return err
	}
	log := newLogger("console", f.logLevel)
	creds := f.creds.credentials()
	if (creds.AccessKey == "") != (creds.SecretKey == "") {
		return fmt.Errorf("console: give both --access-key and --secret-key (or neither): ACL mode needs the pair")
	}
	adm := admin.New(admin.Config{NamesrvAddrs: addrs, Timeout: f.timeout, Credentials: creds, TLS: tlsCfg, Logger: log})
	defer adm.Close()
	srv, err := console.New(console.Config{Admin: adm, Listen: f.listen, Credentials: creds, Namesrv: addrs,
		Version: binaryVersion().Version, Logger: log})
	if err != nil {
		return err
	}
	bound, err := srv.Listen()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "rocketraft console on http://%s (nameserver %s, ACL %v, TLS %v)\n",
		bound, strings.Join(addrs, ";"), creds.AccessKey != "", tlsCfg != nil)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return srv.Run(ctx)
}
