package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// adminConsumerCommands are the consumer-management subcommands of admin group:
// reset-offset and running-info. -g/--group names the consumer group (as in
// mqadmin resetOffsetByTime -g) and -B/--broker-name the broker group.
func adminConsumerCommands(f *adminFlags) []*cobra.Command {
	var group, topic, brokerName, clientID string
	var timestamp int64
	var force bool
	reset := &cobra.Command{
		Use:   "reset-offset -g CONSUMER_GROUP -t TOPIC -s MS",
		Short: "Move a consumer group's offsets on a topic to a time (ms; -1 = the end); connected clients follow",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" || topic == "" || !cmd.Flags().Changed("timestamp") {
				return fmt.Errorf("reset-offset needs -g/--group, -t/--topic and -s/--timestamp")
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.GroupResetOffset(ctx, group, topic, timestamp, force, brokerName)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.ResetOffsetTable(group, rs), nil
			})
		},
	}
	rf := reset.Flags()
	addConsumerGroup(rf, &group)
	addTopic(rf, &topic, "topic")
	rf.Int64VarP(&timestamp, "timestamp", shortTimestamp, 0, "Unix time in ms: the first message stored at or after it is consumed next; -1 = skip to the end")
	rf.BoolVarP(&force, "force", shortForce, true, "also move offsets forward (-f=false: only rewind)")
	addBrokerName(rf, &brokerName, "broker group (brokerName); default every group with the topic")
	addOldBrokerGroup(rf, &brokerName)

	info := &cobra.Command{
		Use:   "running-info -g CONSUMER_GROUP",
		Short: "Ask each client of a consumer group (relayed by a broker) for its properties and subscriptions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("running-info needs -g/--group")
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				infos, err := c.GroupRunningInfo(ctx, group, clientID, brokerName)
				return admin.RunningInfoTable(group, infos), err
			})
		},
	}
	inf := info.Flags()
	addConsumerGroup(inf, &group)
	inf.StringVar(&clientID, "client", "", "only this client id (default: every client of the group)")
	addBrokerName(inf, &brokerName, "broker group whose leader relays (default: the only or first group)")
	addOldBrokerGroup(inf, &brokerName)
	return []*cobra.Command{reset, info}
}
