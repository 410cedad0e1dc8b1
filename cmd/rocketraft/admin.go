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
	group   string // broker group (brokerName)
	cluster string
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

// run builds a client, runs f with a context cancelled by Ctrl-C, and prints t.
func (f *adminFlags) run(cmd *cobra.Command, do func(ctx context.Context, c *admin.Client) (admin.Table, error)) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.Close()
	t, err := do(ctx, c)
	if len(t.Header) > 0 && (err == nil || len(t.Rows) > 0) {
		if werr := t.Write(cmd.OutOrStdout()); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

func newAdminCommand() *cobra.Command {
	f := &adminFlags{}
	cmd := &cobra.Command{Use: "admin", Short: "Inspect and operate a cluster over the remoting protocol"}
	pf := cmd.PersistentFlags()
	pf.StringVarP(&f.namesrv, "namesrv", "n", admin.DefaultNamesrv, "nameserver addresses, ';'-separated")
	pf.StringVarP(&f.broker, "broker", "b", "", "talk to this broker node only (host:port) instead of resolving through the nameserver")
	pf.DurationVar(&f.timeout, "timeout", 5*time.Second, "timeout of one request")
	f.creds.register(pf)
	f.tls.register(pf, true)
	cmd.AddCommand(adminClusterCommand(f), adminTopicCommand(f), adminGroupCommand(f), adminMessageCommand(f), adminRaftCommand(f),
		adminACLCommand(f))
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

func adminTopicCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "topic", Short: "Create, update, delete, list and inspect topics"}
	spec := admin.TopicSpec{}
	upsert := func(use, short string) *cobra.Command {
		c := &cobra.Command{
			Use: use + " TOPIC", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
					s := spec
					s.Name, s.Cluster, s.Group = args[0], f.cluster, f.group
					rs, err := c.TopicCreate(ctx, s)
					if err == nil {
						err = admin.FirstError(rs)
					}
					return admin.ResultsTable("topic "+use+" "+s.Name, rs), err
				})
			},
		}
		fl := c.Flags()
		fl.Int32VarP(&spec.ReadQueueNums, "read-queues", "r", 8, "read queue count")
		fl.Int32VarP(&spec.WriteQueueNums, "write-queues", "w", 8, "write queue count")
		fl.Int32VarP(&spec.Perm, "perm", "p", 6, "permission bits: 2 write, 4 read")
		fl.BoolVar(&spec.Order, "order", false, "ordered topic")
		groupFlags(c, f)
		return c
	}
	del := &cobra.Command{
		Use: "delete TOPIC", Short: "Delete a topic from the brokers and the nameservers", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.TopicDelete(ctx, args[0], f.cluster, f.group)
				if err == nil {
					err = admin.FirstError(rs)
				}
				return admin.ResultsTable("topic delete "+args[0], rs), err
			})
		},
	}
	groupFlags(del, f)
	list := &cobra.Command{
		Use: "list", Short: "Every topic the nameserver knows", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				ts, err := c.TopicList(ctx)
				return admin.TopicListTable(ts), err
			})
		},
	}
	route := &cobra.Command{
		Use: "route TOPIC", Short: "The topic's route: groups, queues, permissions, nodes", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				r, err := c.TopicRoute(ctx, args[0])
				if err != nil {
					return admin.Table{}, err
				}
				return admin.RouteTable(args[0], r), nil
			})
		},
	}
	status := &cobra.Command{
		Use: "status TOPIC", Short: "Min and max offsets of every queue", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				qs, err := c.TopicStatus(ctx, args[0])
				if err != nil {
					return admin.Table{}, err
				}
				return admin.TopicStatusTable(args[0], qs), nil
			})
		},
	}
	cmd.AddCommand(upsert("create", "Create a topic on every group (or --cluster / --group)"),
		upsert("update", "Change a topic's queues or permissions"), del, list, route, status)
	return cmd
}

// groupFlags adds the target-selection flags of commands that write to groups.
func groupFlags(c *cobra.Command, f *adminFlags) {
	c.Flags().StringVarP(&f.group, "group", "g", "", "broker group (brokerName); default every group")
	c.Flags().StringVarP(&f.cluster, "cluster", "c", "", "cluster (brokerClusterName); default every cluster")
}

func adminGroupCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "group", Short: "Consumer groups: list and progress"}
	list := &cobra.Command{
		Use: "list", Short: "Subscription groups of every broker group", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				gs, err := c.GroupList(ctx, f.cluster, f.group)
				return admin.GroupListTable(gs), err
			})
		},
	}
	groupFlags(list, f)
	var topic string
	progress := &cobra.Command{
		Use: "progress CONSUMER_GROUP", Short: "Per-queue broker offset, consumer offset and lag", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				qs, err := c.GroupProgress(ctx, args[0], topic, f.group)
				if err != nil {
					return admin.Table{}, err
				}
				return admin.GroupProgressTable(args[0], qs), nil
			})
		},
	}
	progress.Flags().StringVarP(&topic, "topic", "t", "", "only this topic (lists its queues even without offsets)")
	progress.Flags().StringVarP(&f.group, "group", "g", "", "broker group (brokerName); default every group")
	cmd.AddCommand(list, progress)
	cmd.AddCommand(adminConsumerCommands(f)...)
	return cmd
}

func adminMessageCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "message", Short: "Find messages by key or id and print them decoded"}
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
	id.Flags().StringVarP(&topic, "topic", "t", "", "topic, to look up a producer msgId (UNIQ_KEY)")
	cmd.AddCommand(key, id)
	return cmd
}

func adminRaftCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "raft", Short: "A group's raft membership, leadership and snapshots"}
	cmd.PersistentFlags().StringVarP(&f.group, "group", "g", "", "broker group (brokerName); may be omitted when there is one")
	change := func(use, short string, args cobra.PositionalArgs, do func(ctx context.Context, c *admin.Client, args []string) (admin.GroupResult, error)) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
					r, err := do(ctx, c, args)
					if err != nil {
						return admin.Table{}, err
					}
					return admin.ResultsTable("raft "+strings.Join(append([]string{strings.Fields(use)[0]}, args...), " "), []admin.GroupResult{r}), r.Err
				})
			},
		}
	}
	peers := &cobra.Command{
		Use: "peers", Short: "Members with suffrage and the leader", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				g, ps, err := c.RaftPeers(ctx, f.group)
				return admin.RaftPeersTable(g.Name, ps), err
			})
		},
	}
	snapshot := &cobra.Command{
		Use: "snapshot", Short: "Snapshot every node of the group and compact its log", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				g, rs, err := c.RaftSnapshot(ctx, f.group)
				if err == nil {
					err = admin.SnapshotError(rs)
				}
				return admin.SnapshotTable(g.Name, rs), err
			})
		},
	}
	cmd.AddCommand(peers, snapshot,
		change("transfer-leader [ID]", "Hand leadership to ID, or to the most caught-up follower", cobra.MaximumNArgs(1),
			func(ctx context.Context, c *admin.Client, a []string) (admin.GroupResult, error) {
				id := ""
				if len(a) == 1 {
					id = a[0]
				}
				return c.RaftTransferLeader(ctx, f.group, id)
			}),
		change("add-voter ID RAFT_ADDR", "Add a voting member (or promote a non-voter)", cobra.ExactArgs(2),
			func(ctx context.Context, c *admin.Client, a []string) (admin.GroupResult, error) {
				return c.RaftAddVoter(ctx, f.group, a[0], a[1])
			}),
		change("add-nonvoter ID RAFT_ADDR", "Add a member that replicates without voting", cobra.ExactArgs(2),
			func(ctx context.Context, c *admin.Client, a []string) (admin.GroupResult, error) {
				return c.RaftAddNonvoter(ctx, f.group, a[0], a[1])
			}),
		change("remove ID", "Remove a member", cobra.ExactArgs(1),
			func(ctx context.Context, c *admin.Client, a []string) (admin.GroupResult, error) {
				return c.RaftRemove(ctx, f.group, a[0])
			}),
	)
	return cmd
}
