package main

import "github.com/spf13/cobra"

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "rocketraft",
		Short:         "RocketMQ-compatible broker whose groups replicate through Raft",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newNamesrvCommand(), newBrokerCommand(), newDevCommand(), newBenchCommand(), newAdminCommand(), newConsoleCommand())
	return root
}
