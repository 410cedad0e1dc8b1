package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/nameserver"
)

func newNamesrvCommand() *cobra.Command {
	var confPath, listen string
	cmd := &cobra.Command{
		Use:   "namesrv",
		Short: "Run a nameserver (route registry)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := config.DefaultNamesrv()
			if confPath != "" {
				var err error
				if cfg, err = config.LoadNamesrv(confPath); err != nil {
					return err
				}
			}
			addr := cfg.Addr()
			if listen != "" {
				addr = listen
			}
			log := newLogger("namesrv", cfg.LogLevel)
			tlsCfg, err := serverTLS(cfg.TLS)
			if err != nil {
				return err
			}
			srv := nameserver.New(nameserver.Config{ListenAddr: addr, BrokerExpireTimeout: cfg.BrokerExpireTimeout, TLS: tlsCfg}, log)
			if err := srv.Start(); err != nil {
				return err
			}
			log.Info("nameserver listening", "addr", srv.Addr())
			waitForSignal()
			return srv.Close()
		},
	}
	cmd.Flags().StringVarP(&confPath, "config", "c", "", "namesrv.conf (Java properties or YAML)")
	cmd.Flags().StringVar(&listen, "listen", "", "listen address host:port (overrides the config)")
	return cmd
}

func waitForSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	signal.Stop(ch)
}
