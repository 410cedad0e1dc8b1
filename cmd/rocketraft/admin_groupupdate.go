package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// groupUpdateCommands are group update and group delete (mqadmin
// updateSubGroup, deleteSubGroup). Only the flags given change: a flag's
// zero value (false, 0) is a value to write, not "unset", so the patch
// looks at Changed rather than at the values.
func groupUpdateCommands(f *adminFlags) []*cobra.Command {
	var group string
	var tg target
	var retryQueues, maxRetries int32
	var consume, broadcast, orderly bool
	update := &cobra.Command{
		Use: "update CONSUMER_GROUP", Short: "Create a subscription group or change only the settings given (group as argument or -g)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := subject(cmd, args, "group", "consumer group")
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			p := admin.GroupPatch{
				RetryQueueNums: ifChanged(fl, "retry-queues", &retryQueues),
				RetryMaxTimes:  ifChanged(fl, "max-retries", &maxRetries),
				ConsumeEnable:  ifChanged(fl, "consume", &consume),
				Broadcast:      ifChanged(fl, "broadcast", &broadcast),
				Orderly:        ifChanged(fl, "orderly", &orderly),
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				cs, err := c.GroupUpdate(ctx, name, tg.cluster, tg.brokerName, p)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.GroupUpdateTable(name, cs), admin.GroupUpdateError(cs)
			})
		},
	}
	fl := update.Flags()
	addConsumerGroup(fl, &group)
	tg.register(fl)
	fl.Int32Var(&retryQueues, "retry-queues", 1, "retry queues (retryQueueNums)")
	fl.Int32Var(&maxRetries, "max-retries", 16, "redeliveries before the dead-letter queue (retryMaxTimes; -1 none)")
	fl.BoolVar(&consume, "consume", true, "consumeEnable: the group may consume")
	fl.BoolVar(&broadcast, "broadcast", true, "consumeBroadcastEnable")
	fl.BoolVar(&orderly, "orderly", false, "consumeMessageOrderly")

	var dgroup string
	var dtg target
	var clean bool
	del := &cobra.Command{
		Use: "delete CONSUMER_GROUP", Short: "Delete a subscription group from every (or the selected) broker group",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := subject(cmd, args, "group", "consumer group")
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.GroupDelete(ctx, name, dtg.cluster, dtg.brokerName, clean)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.ResultsTable("group delete "+name, rs), admin.FirstError(rs)
			})
		},
	}
	addConsumerGroup(del.Flags(), &dgroup)
	dtg.register(del.Flags())
	del.Flags().BoolVar(&clean, "clean-offsets", false, "drop the group's committed offsets too")
	return []*cobra.Command{update, del}
}
