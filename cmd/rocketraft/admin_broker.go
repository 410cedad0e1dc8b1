package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// adminBrokerCommand is admin broker: per-node runtime info and settings, as
// mqadmin brokerStatus, getBrokerConfig and updateBrokerConfig. -b names one
// node; otherwise every node of the groups -c/-B select (default: all).
func adminBrokerCommand(f *adminFlags) *cobra.Command {
	var sel target
	cmd := &cobra.Command{Use: "broker", Short: "Per-node runtime info and settings (mqadmin brokerStatus, getBrokerConfig, updateBrokerConfig)"}
	sel.register(cmd.PersistentFlags())
	status := &cobra.Command{
		Use: "status", Short: "Every node's runtime table: TPS, day totals, disk, CommitLog offsets, raft state", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.BrokerStatus(ctx, sel.cluster, sel.brokerName)
				if err == nil {
					err = admin.StatusError(rs)
				}
				return admin.BrokerStatusTable(rs), err
			})
		},
	}
	config := &cobra.Command{Use: "config", Short: "Read a node's broker.conf in force, or change the keys that can change live"}
	get := &cobra.Command{
		Use: "get", Short: "Every key with the value in force on each node", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				cs, err := c.BrokerConfig(ctx, sel.cluster, sel.brokerName)
				if err == nil {
					err = admin.ConfigError(cs)
				}
				return admin.BrokerConfigTable(cs), err
			})
		},
	}
	set := &cobra.Command{
		Use:   "set KEY=VALUE...",
		Short: "Change live keys on each node until it restarts (maxMessageSize, fileReservedTime, deleteWhen, diskMaxUsedSpaceRatio, logLevel)",
		Long: "Sends UPDATE_BROKER_CONFIG to each selected node. A node applies all the keys or none: a key that\n" +
			"cannot change while the broker runs, an unknown key or a bad value refuses the whole change, naming it.\n" +
			"The change is the node's until it restarts; broker.conf is not rewritten.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			settings, err := admin.ParseSettings(args)
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				us, err := c.UpdateBrokerConfig(ctx, sel.cluster, sel.brokerName, settings)
				if err == nil {
					err = admin.UpdateError(us)
				}
				return admin.UpdateTable(us), err
			})
		},
	}
	config.AddCommand(get, set)
	cmd.AddCommand(status, config)
	return cmd
}

// adminVersionCommand is admin version: this binary's version (the brokers
// report theirs as rocketraftVersion in `admin broker status`).
func adminVersionCommand(f *adminFlags) *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "This binary's version, commit and Go toolchain", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(context.Context, *admin.Client) (admin.Table, error) {
				return admin.VersionTable(binaryVersion()), nil
			})
		},
	}
}
