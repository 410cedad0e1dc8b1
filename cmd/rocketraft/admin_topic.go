package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// Topic defaults of topic create: mqadmin updateTopic's.
const (
	defaultTopicQueues = 8
	defaultTopicPerm   = 6 // read and write
)

// adminTopicCommand is admin topic. Every subcommand takes the topic as its
// argument or, as mqadmin does, as -t/--topic.
func adminTopicCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "topic", Short: "Create, update, delete, list and inspect topics"}
	cmd.AddCommand(topicCreateCommand(f), topicUpdateCommand(f), topicDeleteCommand(f), topicListCommand(f),
		topicRouteCommand(f), topicStatusCommand(f))
	return cmd
}

// topicArg is the topic of a topic subcommand (argument or -t).
func topicArg(cmd *cobra.Command, args []string) (string, error) {
	return subject(cmd, args, "topic", "topic")
}

// withTopic gives a topic subcommand its -t/--topic and argument rule.
func withTopic(c *cobra.Command) *cobra.Command {
	var ignored string // read back through cmd.Flags() by topicArg
	addTopic(c.Flags(), &ignored, "the topic (instead of the TOPIC argument, as in mqadmin)")
	c.Args = cobra.MaximumNArgs(1)
	return c
}

func topicCreateCommand(f *adminFlags) *cobra.Command {
	var spec admin.TopicSpec
	var tg target
	c := withTopic(&cobra.Command{
		Use:   "create TOPIC",
		Short: "Create a topic on every group (or -c / -B); on an existing topic it sets every field, defaults included",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				s := spec
				s.Name, s.Cluster, s.BrokerName = name, tg.cluster, tg.brokerName
				rs, err := c.TopicCreate(ctx, s)
				if err == nil {
					err = admin.FirstError(rs)
				}
				return admin.ResultsTable("topic create "+s.Name, rs), err
			})
		},
	})
	fl := c.Flags()
	fl.Int32VarP(&spec.ReadQueueNums, "read-queues", shortReadQueues, defaultTopicQueues, "read queue count")
	fl.Int32VarP(&spec.WriteQueueNums, "write-queues", shortWriteQs, defaultTopicQueues, "write queue count")
	fl.Int32VarP(&spec.Perm, "perm", shortPerm, defaultTopicPerm, "permission bits: 2 write, 4 read")
	fl.BoolVar(&spec.Order, "order", false, "ordered topic (mqadmin's -o; -o is --output here)")
	tg.register(fl)
	return c
}

// topicUpdateCommand is topic update: only the flags given change; the rest
// keep each group's current value (read with GET_TOPIC_CONFIG first).
func topicUpdateCommand(f *adminFlags) *cobra.Command {
	var read, write, perm int32
	var order bool
	var tg target
	c := withTopic(&cobra.Command{
		Use:   "update TOPIC",
		Short: "Change only the given fields of a topic (-r, -w, -p, --order); the others keep their values",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			p := admin.TopicPatch{
				ReadQueueNums:  ifChanged(fl, "read-queues", &read),
				WriteQueueNums: ifChanged(fl, "write-queues", &write),
				Perm:           ifChanged(fl, "perm", &perm),
				Order:          ifChanged(fl, "order", &order),
			}
			if p.Empty() {
				return fmt.Errorf("topic update %s changes nothing: give -r/--read-queues, -w/--write-queues, -p/--perm or --order", name)
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				cs, err := c.TopicUpdate(ctx, name, tg.cluster, tg.brokerName, p)
				if err == nil {
					err = admin.TopicUpdateError(cs)
				}
				return admin.TopicUpdateTable(name, cs), err
			})
		},
	})
	fl := c.Flags()
	fl.Int32VarP(&read, "read-queues", shortReadQueues, 0, "new read queue count (default: unchanged)")
	fl.Int32VarP(&write, "write-queues", shortWriteQs, 0, "new write queue count (default: unchanged)")
	fl.Int32VarP(&perm, "perm", shortPerm, 0, "new permission bits: 2 write, 4 read (default: unchanged)")
	fl.BoolVar(&order, "order", false, "ordered topic: --order or --order=false (default: unchanged)")
	tg.register(fl)
	return c
}

func topicDeleteCommand(f *adminFlags) *cobra.Command {
	var tg target
	c := withTopic(&cobra.Command{
		Use: "delete TOPIC", Short: "Delete a topic from the brokers and the nameservers",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.TopicDelete(ctx, name, tg.cluster, tg.brokerName)
				if err == nil {
					err = admin.FirstError(rs)
				}
				return admin.ResultsTable("topic delete "+name, rs), err
			})
		},
	})
	tg.register(c.Flags())
	return c
}

func topicListCommand(f *adminFlags) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "Every topic the nameserver knows", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				ts, err := c.TopicList(ctx)
				return admin.TopicListTable(ts), err
			})
		},
	}
}

func topicRouteCommand(f *adminFlags) *cobra.Command {
	return withTopic(&cobra.Command{
		Use: "route TOPIC", Short: "The topic's route: groups, queues, permissions, nodes",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				r, err := c.TopicRoute(ctx, name)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.RouteTable(name, r), nil
			})
		},
	})
}

func topicStatusCommand(f *adminFlags) *cobra.Command {
	return withTopic(&cobra.Command{
		Use: "status TOPIC", Short: "Min and max offsets of every queue",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				qs, err := c.TopicStatus(ctx, name)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.TopicStatusTable(name, qs), nil
			})
		},
	})
}
