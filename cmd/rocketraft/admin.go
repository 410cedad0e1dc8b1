package main

import (
	"context"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// adminFlags are the flags every admin subcommand shares.
type adminFlags struct {
	namesrv string
	broker  string
	timeout time.Duration
	output  string
	creds   credentialFlags
	tls     clientTLSFlags
}

func (f *adminFlags) client() (*admin.Client, error) {
	var addrs []string
	for _, a := range strings.Split(f.namesrv, ";") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	tlsCfg, err := f.tls.config()
	if err != nil {
		return nil, err
	}
	return admin.New(admin.Config{NamesrvAddrs: addrs, BrokerAddr: f.broker, Timeout: f.timeout, Credentials: f.creds.credentials(),
		TLS: tlsCfg}), nil
}

// run builds a client, runs do with a context cancelled by Ctrl-C, and prints
// its table in the --output format. A failure with partial results (some
// groups answered) prints those too; the error goes to stderr either way, so
// stdout stays one parseable document with -o json.
func (f *adminFlags) run(cmd *cobra.Command, do func(ctx context.Context, c *admin.Client) (admin.Table, error)) error {
	format, err := admin.ParseFormat(f.output)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.Close()
	t, err := do(ctx, c)
	if len(t.Header) > 0 && (err == nil || len(t.Rows) > 0) {
		if werr := t.Render(cmd.OutOrStdout(), format); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

func newAdminCommand() *cobra.Command {
	f := &adminFlags{}
	cmd := &cobra.Command{Use: "admin", Short: "Inspect and operate a cluster over the remoting protocol"}
	pf := cmd.PersistentFlags()
	pf.StringVarP(&f.namesrv, "namesrv", shortNamesrv, admin.DefaultNamesrv, "nameserver addresses, ';'-separated")
	pf.StringVarP(&f.broker, "broker", shortBroker, "", "talk to this broker node only (host:port) instead of resolving through the nameserver")
	pf.DurationVar(&f.timeout, "timeout", 5*time.Second, "timeout of one request")
	pf.StringVarP(&f.output, "output", shortOutput, string(admin.FormatText), "output format: text (aligned table) or json (the same data as one JSON document)")
	f.creds.register(pf)
	f.tls.register(pf, true)
	cmd.SetFlagErrorFunc(flagErrorHint)
	cmd.AddCommand(adminClusterCommand(f), adminTopicCommand(f), adminGroupCommand(f), adminMessageCommand(f), adminRaftCommand(f),
		adminACLCommand(f), adminBrokerCommand(f), adminVersionCommand(f), adminConnectionsCommand(f))
	return cmd
}

func adminClusterCommand(f *adminFlags) *cobra.Command {
	return &cobra.Command{
		Use: "cluster", Short: "Groups and nodes: role, term, applied/commit index, replication lag", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				nodes, err := c.Cluster(ctx)
				return admin.ClusterTable(nodes), err
			})
		},
	}
}

func adminMessageCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "message", Short: "Find, print, send, consume and trace messages"}
	var maxNum int
	key := &cobra.Command{
		Use: "key TOPIC KEY", Short: "Messages whose KEYS or msgId equal KEY", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				ms, err := c.MessageByKey(ctx, args[0], args[1], maxNum)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.MessagesText(ms), nil
			})
		},
	}
	key.Flags().IntVar(&maxNum, "max", 32, "at most this many messages per group")
	var topic string
	id := &cobra.Command{
		Use: "id MSGID", Short: "A message by offset msgId, or by producer msgId with --topic", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				ms, err := c.MessageByID(ctx, args[0], topic)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.MessagesText(ms), nil
			})
		},
	}
	addTopic(id.Flags(), &topic, "topic, to look up a producer msgId (UNIQ_KEY)")
	cmd.AddCommand(key, id)
	cmd.AddCommand(messageSubcommands(f)...)
	return cmd
}
