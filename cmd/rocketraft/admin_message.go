package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// messageSubcommands are admin message's commands beyond key and id: one
// message by queue offset, print, send, consume and trace (mqadmin
// queryMsgByOffset, printMsg, sendMessage, consumeMessage, queryMsgTraceById).
func messageSubcommands(f *adminFlags) []*cobra.Command {
	return []*cobra.Command{messageOffsetCommand(f), messagePrintCommand(f), messageSendCommand(f),
		messageConsumeCommand(f), messageTraceCommand(f)}
}

func messageOffsetCommand(f *adminFlags) *cobra.Command {
	var brokerName string
	var queue int32
	var offset int64
	c := withTopic(&cobra.Command{
		Use:   "offset TOPIC --broker-name NAME --queue ID --offset N",
		Short: "The message at one queue offset (mqadmin queryMsgByOffset), body included",
		RunE: func(cmd *cobra.Command, args []string) error {
			topic, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			if brokerName == "" || queue < 0 || offset < 0 {
				return fmt.Errorf("message offset: --broker-name, --queue and --offset are required (got %q, %d, %d)", brokerName, queue, offset)
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				m, err := c.MessageAt(ctx, topic, brokerName, queue, offset)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.MessageBodyText(m), nil
			})
		},
	})
	fl := c.Flags()
	addBrokerName(fl, &brokerName, "broker group (brokerName) of the queue")
	fl.Int32Var(&queue, "queue", -1, "queue id")
	fl.Int64Var(&offset, "offset", -1, "queue offset")
	return c
}

// parseTime reads a --begin/--end value: Unix ms, or RFC 3339; "" is 0 (open).
func parseTime(flag, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("--%s=%s: Unix ms are 0 or more", flag, s)
		}
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("--%s=%q: want Unix ms or RFC 3339 (2006-01-02T15:04:05Z)", flag, s)
	}
	return t.UnixMilli(), nil
}

func messagePrintCommand(f *adminFlags) *cobra.Command {
	spec := admin.PrintSpec{}
	var begin, end string
	c := withTopic(&cobra.Command{
		Use:   "print TOPIC [--broker-name NAME --queue ID] [--from N --to N] [--begin T --end T]",
		Short: "A topic's messages with bodies, by queue and offset range or store-time range (mqadmin printMsg)",
		RunE: func(cmd *cobra.Command, args []string) error {
			topic, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			s := spec
			s.Topic = topic
			if s.Begin, err = parseTime("begin", begin); err != nil {
				return err
			}
			if s.End, err = parseTime("end", end); err != nil {
				return err
			}
			if err := s.Validate(); err != nil {
				return fmt.Errorf("message print: %w", err)
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				ms, err := c.PrintMessages(ctx, s)
				return admin.MessagesBodyText(ms), err
			})
		},
	})
	fl := c.Flags()
	addBrokerName(fl, &spec.BrokerName, "only this broker group (brokerName)")
	fl.Int32Var(&spec.QueueID, "queue", -1, "only this queue id (needs --broker-name)")
	fl.Int64Var(&spec.From, "from", -1, "first queue offset (default each queue's min)")
	fl.Int64Var(&spec.To, "to", -1, "end queue offset, exclusive (default each queue's max)")
	fl.StringVar(&begin, "begin", "", "from the first message stored at or after this time (Unix ms or RFC 3339)")
	fl.StringVar(&end, "end", "", "up to the first message stored at or after this time, exclusive")
	fl.IntVar(&spec.Max, "max", 1000, "at most this many messages in all (0: no bound)")
	return c
}

func messageSendCommand(f *adminFlags) *cobra.Command {
	spec := admin.SendSpec{}
	var keys string
	var props []string
	c := withTopic(&cobra.Command{
		Use:   "send TOPIC --body TEXT [--tags T] [--keys K1,K2] [--property k=v]... [--broker-name NAME [--queue ID]]",
		Short: "Send one message; prints its msgId, queue and offset (mqadmin sendMessage)",
		RunE: func(cmd *cobra.Command, args []string) error {
			topic, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			s := spec
			s.Topic = topic
			for _, k := range strings.Split(keys, ",") {
				if k = strings.TrimSpace(k); k != "" {
					s.Keys = append(s.Keys, k)
				}
			}
			s.Properties = map[string]string{}
			for _, p := range props {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return fmt.Errorf("message send: --property %q: want name=value", p)
				}
				s.Properties[k] = v
			}
			if err := s.Validate(); err != nil {
				return fmt.Errorf("message send: %w", err)
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				r, err := c.Send(ctx, s)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.SendResultTable(r), nil
			})
		},
	})
	fl := c.Flags()
	fl.StringVar(&spec.Body, "body", "", "message body (UTF-8 text)")
	fl.StringVar(&spec.Tags, "tags", "", "message tag")
	fl.StringVar(&keys, "keys", "", "message keys, comma-separated")
	fl.StringArrayVar(&props, "property", nil, "user property name=value (repeatable)")
	addBrokerName(fl, &spec.BrokerName, "send to this broker group (default the first with write permission)")
	fl.Int32Var(&spec.QueueID, "queue", -1, "send to this queue id (needs --broker-name)")
	return c
}

func messageConsumeCommand(f *adminFlags) *cobra.Command {
	spec := admin.ConsumeSpec{}
	c := withTopic(&cobra.Command{
		Use:   "consume TOPIC [--group G [--commit]] [--count N]",
		Short: "Pull N messages of a topic from each queue's start, or as a group from its offsets (mqadmin consumeMessage)",
		RunE: func(cmd *cobra.Command, args []string) error {
			topic, err := topicArg(cmd, args)
			if err != nil {
				return err
			}
			s := spec
			s.Topic = topic
			if err := s.Validate(); err != nil {
				return fmt.Errorf("message consume: %w", err)
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				ms, err := c.Consume(ctx, s)
				return admin.MessagesBodyText(ms), err
			})
		},
	})
	fl := c.Flags()
	fl.StringVarP(&spec.Group, "group", shortGroup, "", "consumer group: start at its committed offsets")
	fl.IntVar(&spec.Count, "count", 32, "messages to read in all")
	fl.BoolVar(&spec.Commit, "commit", false, "with --group: move the group's offsets past what was read")
	return c
}

func messageTraceCommand(f *adminFlags) *cobra.Command {
	var topic string
	c := &cobra.Command{
		Use:   "trace MSGID",
		Short: "The trace records of a message (Pub, SubBefore, SubAfter, EndTransaction; mqadmin queryMsgTraceById)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.Trace(ctx, args[0], topic)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.TraceTable(args[0], rs), nil
			})
		},
	}
	c.Flags().StringVar(&topic, "trace-topic", admin.DefaultTraceTopic, "the trace topic (the brokers' msgTraceTopicName)")
	return c
}
