package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// adminRaftCommand is admin raft: one group's membership, leadership and
// snapshots. -B/--broker-name picks the group; it may be left out when the
// cluster has one.
func adminRaftCommand(f *adminFlags) *cobra.Command {
	var brokerName string
	cmd := &cobra.Command{Use: "raft", Short: "A group's raft membership, leadership and snapshots"}
	addBrokerName(cmd.PersistentFlags(), &brokerName, "broker group (brokerName); may be omitted when there is one")
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
				g, ps, err := c.RaftPeers(ctx, brokerName)
				return admin.RaftPeersTable(g.Name, ps), err
			})
		},
	}
	snapshot := &cobra.Command{
		Use: "snapshot", Short: "Snapshot every node of the group and compact its log", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				g, rs, err := c.RaftSnapshot(ctx, brokerName)
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
				return c.RaftTransferLeader(ctx, brokerName, id)
			}),
		change("add-voter ID RAFT_ADDR", "Add a voting member (or promote a non-voter)", cobra.ExactArgs(2),
			func(ctx context.Context, c *admin.Client, a []string) (admin.GroupResult, error) {
				return c.RaftAddVoter(ctx, brokerName, a[0], a[1])
			}),
		change("add-nonvoter ID RAFT_ADDR", "Add a member that replicates without voting", cobra.ExactArgs(2),
			func(ctx context.Context, c *admin.Client, a []string) (admin.GroupResult, error) {
				return c.RaftAddNonvoter(ctx, brokerName, a[0], a[1])
			}),
		change("remove ID", "Remove a member", cobra.ExactArgs(1),
			func(ctx context.Context, c *admin.Client, a []string) (admin.GroupResult, error) {
				return c.RaftRemove(ctx, brokerName, a[0])
			}),
	)
	return cmd
}
