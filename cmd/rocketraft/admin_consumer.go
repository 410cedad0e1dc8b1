package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// adminConsumerCommands are the consumer-management subcommands of admin group:
// reset-offset and running-info. Here --group names the consumer group (as in
// mqadmin resetOffsetByTime -g) and --broker-group the broker group.
func adminConsumerCommands(f *adminFlags) []*cobra.Command {
	var group, topic, brokerGroup, clientID string
	var timestamp int64
	var force bool
	reset := &cobra.Command{
		Use:   "reset-offset --group CONSUMER_GROUP --topic TOPIC --timestamp MS",
		Short: "Move a consumer group's offsets on a topic to a time (ms; -1 = the end); connected clients follow",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" || topic == "" || !cmd.Flags().Changed("timestamp") {
				return fmt.Errorf("reset-offset needs --group, --topic and --timestamp")
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.GroupResetOffset(ctx, group, topic, timestamp, force, brokerGroup)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.ResetOffsetTable(group, rs), nil
			})
		},
	}
	reset.Flags().StringVarP(&group, "group", "g", "", "consumer group")
	reset.Flags().StringVarP(&topic, "topic", "t", "", "topic")
	reset.Flags().Int64Var(&timestamp, "timestamp", 0, "Unix time in ms: the first message stored at or after it is consumed next; -1 = skip to the end")
	reset.Flags().BoolVar(&force, "force", true, "also move offsets forward (false: only rewind)")
	reset.Flags().StringVar(&brokerGroup, "broker-group", "", "broker group (brokerName); default every group with the topic")

	info := &cobra.Command{
		Use:   "running-info --group CONSUMER_GROUP",
		Short: "Ask each client of a consumer group (relayed by a broker) for its properties and subscriptions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("running-info needs --group")
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				infos, err := c.GroupRunningInfo(ctx, group, clientID, brokerGroup)
				return admin.RunningInfoTable(group, infos), err
			})
		},
	}
	info.Flags().StringVarP(&group, "group", "g", "", "consumer group")
	info.Flags().StringVar(&clientID, "client", "", "only this client id (default: every client of the group)")
	info.Flags().StringVar(&brokerGroup, "broker-group", "", "broker group whose leader relays (default: the only or first group)")
	return []*cobra.Command{reset, info}
}
