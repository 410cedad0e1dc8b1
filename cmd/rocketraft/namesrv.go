package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/metrics"
	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/nameserver"
)

func newNamesrvCommand() *cobra.Command {
	var (
		conf   configFlags
		listen string
	)
	cmd := &cobra.Command{
		Use:   "namesrv",
		Short: "Run a nameserver (route registry)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, eff, err := config.Layers{File: conf.path, Env: true, Set: conf.set}.Namesrv()
			if err != nil {
				return err
			}
			if conf.print {
				return printConfig(cmd.OutOrStdout(), eff)
			}
			addr := cfg.Addr()
			if listen != "" {
				addr = listen
			}
			log := newLogger("namesrv", cfg.LogLevel)
			logConfigWarnings(log, cfg.Warnings)
			tlsCfg, err := serverTLS(cfg.TLS)
			if err != nil {
				return err
			}
			nsCfg := nameserver.Config{
				ListenAddr: addr, BrokerExpireTimeout: cfg.BrokerExpireTimeout, ScanInterval: cfg.ScanInterval, TLS: tlsCfg,
			}
			if cfg.BrokerAuthFile != "" {
				if nsCfg.BrokerAuth, err = nameserver.LoadBrokerSecrets(cfg.BrokerAuthFile); err != nil {
					return err
				}
				log.Info("broker authentication on", "brokerAuthFile", cfg.BrokerAuthFile, "brokerNames", nsCfg.BrokerAuth.BrokerNames())
			}
			if cfg.ACLEnable {
				acl, err := auth.LoadFile(cfg.ACLFile)
				if err != nil {
					return err
				}
				nsCfg.Admin = acl
				log.Info("access control on for admin writes", "aclFile", cfg.ACLFile, "accounts", len(acl.AccessKeys()))
			}
			srv := nameserver.New(nsCfg, log)
			if err := srv.Start(); err != nil {
				return err
			}
			log.Info("nameserver listening", "addr", srv.Addr())
			// adminListen: /metrics, /healthz, /readyz (empty disables).
			var adminHTTP *metrics.AdminHTTP
			if cfg.AdminListen != "" {
				if adminHTTP, err = metrics.StartAdminHTTP(cfg.AdminListen, srv.AdminHandler()); err != nil {
					_ = srv.Close()
					return err
				}
				log.Info("admin http serving", "addr", adminHTTP.Addr())
			}
			waitForSignal()
			if adminHTTP != nil {
				_ = adminHTTP.Close()
			}
			return srv.Close()
		},
	}
	conf.register(cmd.Flags(), "namesrv.conf")
	cmd.Flags().StringVar(&listen, "listen", "", "listen address host:port (overrides the config)")
	return cmd
}

func waitForSignal() { _ = waitForSignalOr(nil) }

// waitForSignalOr waits for SIGINT or SIGTERM (nil) or for an error on stop.
func waitForSignalOr(stop <-chan error) error {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(ch)
	select {
	case <-ch:
		return nil
	case err := <-stop:
		return err
	}
}
