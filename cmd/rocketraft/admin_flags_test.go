package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagUse is one flag as one command sees it.
type flagUse struct {
	cmd, long, short, usage string
}

// flagUses lists every flag of every command under root, inherited ones
// included, as cobra parses them (help flags too).
func flagUses(root *cobra.Command) []flagUse {
	var out []flagUse
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		add := func(f *pflag.Flag) { out = append(out, flagUse{c.CommandPath(), f.Name, f.Shorthand, f.Usage}) }
		c.LocalFlags().VisitAll(add)
		c.InheritedFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// shorthandConflicts reports every letter that stands for more than one long
// flag, and every long flag that has more than one letter (or a letter in some
// commands and none in others), naming the commands.
func shorthandConflicts(uses []flagUse) []string {
	byShort := map[string]map[string][]string{} // letter → long → commands
	byLong := map[string]map[string][]string{}  // long → letter → commands
	for _, u := range uses {
		if u.short != "" {
			if byShort[u.short] == nil {
				byShort[u.short] = map[string][]string{}
			}
			byShort[u.short][u.long] = append(byShort[u.short][u.long], u.cmd)
		}
		if byLong[u.long] == nil {
			byLong[u.long] = map[string][]string{}
		}
		byLong[u.long][u.short] = append(byLong[u.long][u.short], u.cmd)
	}
	var out []string
	describe := func(label string, m map[string][]string) {
		if len(m) < 2 {
			return
		}
		var parts []string
		for k, cmds := range m {
			parts = append(parts, fmt.Sprintf("%q in %s", k, strings.Join(cmds, ", ")))
		}
		sort.Strings(parts)
		out = append(out, fmt.Sprintf("%s means: %s", label, strings.Join(parts, "; ")))
	}
	for s, m := range byShort {
		describe("-"+s, m)
	}
	for l, m := range byLong {
		describe("--"+l+"'s shorthand", m)
	}
	sort.Strings(out)
	return out
}

// TestAdminShortFlagsOneMeaning walks the admin command tree: a letter stands
// for one long flag in every command, a long flag has one letter everywhere,
// and the letters mqadmin also uses mean what they mean there.
func TestAdminShortFlagsOneMeaning(t *testing.T) {
	uses := flagUses(newAdminCommand())
	for _, c := range shorthandConflicts(uses) {
		t.Error(c)
	}
	want := map[string]string{
		shortNamesrv: "namesrv", shortBroker: "broker", shortCluster: "cluster", shortTopic: "topic",
		shortGroup: "group", shortReadQueues: "read-queues", shortWriteQs: "write-queues", shortPerm: "perm",
		shortTimestamp: "timestamp", shortForce: "force", shortBrokerName: "broker-name", shortOutput: "output",
	}
	mqadmin := map[string]string{"n": "namesrv", "b": "broker", "c": "cluster", "t": "topic", "g": "group",
		"r": "read-queues", "w": "write-queues", "p": "perm", "s": "timestamp", "f": "force"}
	for s, l := range mqadmin {
		if want[s] != l {
			t.Errorf("-%s is --%s, mqadmin's -%s is %s", s, want[s], s, l)
		}
	}
	seen := map[string]bool{}
	for _, u := range uses {
		if u.short != "" && want[u.short] != u.long && u.short != "h" {
			t.Errorf("%s: -%s/--%s is not in the table of letters (admin_flags.go)", u.cmd, u.short, u.long)
		}
		seen[u.short] = true
		switch u.long {
		case "group":
			if !strings.Contains(u.usage, "consumer group") {
				t.Errorf("%s: --group is %q, not a consumer group", u.cmd, u.usage)
			}
		case "broker-name", "broker-group":
			if !strings.Contains(u.usage, "broker group") && !strings.Contains(u.usage, "broker-name") {
				t.Errorf("%s: --%s is %q", u.cmd, u.long, u.usage)
			}
		case "order":
			if u.short != "" {
				t.Errorf("%s: --order has -%s; it is long only (-o is --output)", u.cmd, u.short)
			}
		}
	}
	for s, l := range want {
		if !seen[s] {
			t.Errorf("-%s/--%s is in the table but no command has it", s, l)
		}
	}
}

// TestShorthandConflictsFindsThem: the checker above fails on the two bugs it
// exists for (one letter, two meanings; one flag, two letters).
func TestShorthandConflictsFindsThem(t *testing.T) {
	root := &cobra.Command{Use: "x"}
	a := &cobra.Command{Use: "a", Run: func(*cobra.Command, []string) {}}
	a.Flags().StringP("group", "g", "", "consumer group")
	a.Flags().StringP("topic", "t", "", "topic")
	b := &cobra.Command{Use: "b", Run: func(*cobra.Command, []string) {}}
	b.Flags().StringP("broker-group", "g", "", "broker group")
	b.Flags().String("topic", "", "topic")
	root.AddCommand(a, b)
	got := shorthandConflicts(flagUses(root))
	joined := strings.Join(got, "\n")
	if len(got) != 2 || !strings.Contains(joined, `-g means: "broker-group" in x b; "group" in x a`) ||
		!strings.Contains(joined, `--topic's shorthand means: "" in x b; "t" in x a`) {
		t.Fatalf("conflicts %q", got)
	}
}

// TestAdminOldGroupFlagExplains: -g/--group where it used to name a broker
// group fails before any network call and says what to use instead; the old
// --broker-group of the consumer commands still parses.
func TestAdminOldGroupFlagExplains(t *testing.T) {
	for _, args := range [][]string{
		{"admin", "raft", "peers", "-g", "broker-a"},
		{"admin", "topic", "create", "T", "--group", "broker-a"},
		{"admin", "acl", "list", "-g", "broker-a"},
	} {
		root := newRootCommand()
		root.SetArgs(args)
		root.SetOut(&strings.Builder{})
		root.SetErr(&strings.Builder{})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), "-B/--broker-name") {
			t.Errorf("%v: %v", args, err)
		}
	}
	root := newRootCommand()
	root.SetArgs([]string{"admin", "group", "reset-offset", "--broker-group", "broker-a", "-g", "g", "-t", "T", "-s", "-1", "-o", "yaml"})
	root.SetOut(&strings.Builder{})
	root.SetErr(&strings.Builder{})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), `--output="yaml"`) {
		t.Errorf("--broker-group must still parse (then -o yaml fails): %v", err)
	}
}
