package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// envACLAccountSecret holds the secret acl set gives an account, so it need
// not appear on the command line.
const envACLAccountSecret = "ROCKETRAFT_ACL_ACCOUNT_SECRET"

// adminACLCommand is admin acl: the ACL 1.0 admin codes 50–54 against the
// leader of every selected broker group (each group replicates its own ACL).
// Requests are signed with --access-key/--secret-key, which must name an admin
// account.
func adminACLCommand(f *adminFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "acl", Short: "List and change ACL accounts and the global allow-list (replicated by each group)"}
	var tg target
	list := &cobra.Command{
		Use: "list", Short: "Accounts with admin flag and permissions (never secrets), and the global allow-list", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				cs, err := c.ACLList(ctx, tg.cluster, tg.brokerName)
				return admin.ACLListTable(cs), err
			})
		},
	}
	tg.register(list.Flags())

	var secret, white, defTopic, defGroup, topicPerms, groupPerms string
	var isAdmin bool
	set := &cobra.Command{
		Use:   "set ACCESS_KEY",
		Short: "Create or update an account (mqadmin updateAclConfig); the secret is required, also for an update",
		Long: "Create or update an account. The secret comes from --account-secret or $" + envACLAccountSecret +
			" (preferred: flags show in the process list) and needs at least 7 characters. Flags left out keep the" +
			" account's value, except --admin: an update without --admin demotes an admin (as in Apache RocketMQ).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s := admin.ACLAccountSpec{AccessKey: args[0], SecretKey: secret, Admin: isAdmin}
			if s.SecretKey == "" {
				s.SecretKey = os.Getenv(envACLAccountSecret)
			}
			if s.SecretKey == "" {
				return fmt.Errorf("acl set needs the account's secret: --account-secret or $%s", envACLAccountSecret)
			}
			fl := cmd.Flags()
			for name, dst := range map[string]**string{"white-addr": &s.WhiteRemoteAddress, "default-topic-perm": &s.DefaultTopicPerm,
				"default-group-perm": &s.DefaultGroupPerm, "topic-perms": &s.TopicPerms, "group-perms": &s.GroupPerms} {
				if fl.Changed(name) {
					v, _ := fl.GetString(name)
					*dst = &v
				}
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.ACLSet(ctx, s, tg.cluster, tg.brokerName)
				if err == nil {
					err = admin.FirstError(rs)
				}
				return admin.ResultsTable("acl set "+s.AccessKey, rs), err
			})
		},
	}
	sf := set.Flags()
	sf.StringVar(&secret, "account-secret", "", "the account's secret key (default $"+envACLAccountSecret+")")
	sf.BoolVar(&isAdmin, "admin", false, "admin account (may use the admin codes); false demotes an existing admin")
	sf.StringVar(&white, "white-addr", "", "address pattern that needs no signature (\"\" clears it)")
	sf.StringVar(&defTopic, "default-topic-perm", "", "DENY, PUB, SUB or PUB|SUB for unlisted topics")
	sf.StringVar(&defGroup, "default-group-perm", "", "DENY, PUB, SUB or PUB|SUB for unlisted groups")
	sf.StringVar(&topicPerms, "topic-perms", "", "comma-separated TOPIC=PERM list; replaces the account's (\"\" clears it)")
	sf.StringVar(&groupPerms, "group-perms", "", "comma-separated GROUP=PERM list; replaces the account's (\"\" clears it)")
	tg.register(sf)

	del := &cobra.Command{
		Use: "delete ACCESS_KEY", Short: "Delete an account (mqadmin deleteAclConfig)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.ACLDelete(ctx, args[0], tg.cluster, tg.brokerName)
				if err == nil {
					err = admin.FirstError(rs)
				}
				return admin.ResultsTable("acl delete "+args[0], rs), err
			})
		},
	}
	tg.register(del.Flags())

	whitelist := &cobra.Command{
		Use:   "whitelist [PATTERN,...]",
		Short: "Replace the global allow-list: addresses trusted without a signature (none: trust no address)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var patterns []string
			if len(args) == 1 {
				patterns = strings.Split(args[0], ",")
			}
			return f.run(cmd, func(ctx context.Context, c *admin.Client) (admin.Table, error) {
				rs, err := c.ACLWhitelist(ctx, patterns, tg.cluster, tg.brokerName)
				if err == nil {
					err = admin.FirstError(rs)
				}
				return admin.ResultsTable("acl whitelist", rs), err
			})
		},
	}
	tg.register(whitelist.Flags())
	cmd.AddCommand(list, set, del, whitelist)
	return cmd
}
