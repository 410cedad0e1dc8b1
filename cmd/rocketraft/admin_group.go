package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// adminGroupCommand is admin group: consumer groups. -g/--group is the
// consumer group in each subcommand (progress also takes it as its argument),
// -B/--broker-name a broker group.
func adminGroupCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "group", Short: "Consumer groups: list, progress, offset reset, running info"}
	var tg target
	list := &cobra.Command{
		Use: "list", Short: "Subscription groups of every broker group", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				gs, err := c.GroupList(ctx, tg.cluster, tg.brokerName)
				return admin.GroupListTable(gs), err
			})
		},
	}
	tg.register(list.Flags())
	cmd.AddCommand(list, groupProgressCommand(f))
	cmd.AddCommand(adminConsumerCommands(f)...)
	cmd.AddCommand(groupUpdateCommands(f)...)
	return cmd
}

// groupProgressCommand is group progress, mqadmin consumerProgress.
func groupProgressCommand(f *adminFlags) *cobra.Command {
	var group, topic, brokerName string
	c := &cobra.Command{
		Use: "progress CONSUMER_GROUP", Short: "Per-queue broker offset, consumer offset and lag (group as argument or -g)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := subject(cmd, args, "group", "consumer group")
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				qs, err := c.GroupProgress(ctx, name, topic, brokerName)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.GroupProgressTable(name, qs), nil
			})
		},
	}
	fl := c.Flags()
	addConsumerGroup(fl, &group)
	addTopic(fl, &topic, "only this topic (lists its queues even without offsets)")
	addBrokerName(fl, &brokerName, "broker group (brokerName); default every group")
	return c
}
