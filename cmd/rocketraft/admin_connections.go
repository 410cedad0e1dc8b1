package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// adminConnectionsCommand is admin connections: the clients of a consumer
// group (mqadmin consumerConnection) or producer group (producerConnection).
func adminConnectionsCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "connections", Short: "Clients connected as a consumer or producer group"}
	var group, brokerName string
	consumer := &cobra.Command{
		Use: "consumer CONSUMER_GROUP", Short: "Members of a consumer group: client, address, language, version, subscriptions (group as argument or -g)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := subject(cmd, args, "group", "consumer group")
			if err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				cc, err := c.ConsumerConnections(ctx, name, brokerName)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.ConsumerConnectionsTable(cc), nil
			})
		},
	}
	addConsumerGroup(consumer.Flags(), &group)
	addBrokerName(consumer.Flags(), &brokerName, "broker group (brokerName) to ask; default every group")
	var topic string
	producer := &cobra.Command{
		Use: "producer PRODUCER_GROUP -t TOPIC", Short: "Producers of a group, asked of the broker groups serving TOPIC",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if topic == "" {
				return fmt.Errorf("admin connections producer %s: needs -t/--topic: producers are known to the brokers of the topics they send to", args[0])
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				cs, err := c.ProducerConnections(ctx, args[0], topic)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.ProducerConnectionsTable(args[0], cs), nil
			})
		},
	}
	addTopic(producer.Flags(), &topic, "a topic the group sends to (required)")
	cmd.AddCommand(consumer, producer)
	return cmd
}
