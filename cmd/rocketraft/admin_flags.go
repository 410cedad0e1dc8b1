package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The admin CLI's short flags. Each letter means one thing in every admin
// command (TestAdminShortFlagsOneMeaning walks the tree), and it is mqadmin's
// letter where mqadmin has one, so an operator's muscle memory carries over:
//
//	-n namesrv      mqadmin -n namesrvAddr
//	-b broker       one node's host:port (mqadmin -b brokerAddr)
//	-c cluster      mqadmin -c clusterName
//	-B broker-name  a broker group (brokerName); mqadmin has no common letter
//	                for it (-b is brokerAddr in 28 commands, brokerName in 5)
//	-t topic        mqadmin -t topic
//	-g group        a consumer group, always (mqadmin consumerProgress,
//	                updateSubGroup, resetOffsetByTime -g)
//	-r -w -p        read-queues, write-queues, perm (mqadmin updateTopic)
//	-s timestamp    mqadmin resetOffsetByTime -s
//	-f force        mqadmin resetOffsetByTime -f
//	-o output       text or json; mqadmin updateTopic's -o (order) is
//	                --order here, long only
const (
	shortNamesrv    = "n"
	shortBroker     = "b"
	shortCluster    = "c"
	shortBrokerName = "B"
	shortTopic      = "t"
	shortGroup      = "g"
	shortReadQueues = "r"
	shortWriteQs    = "w"
	shortPerm       = "p"
	shortTimestamp  = "s"
	shortForce      = "f"
	shortOutput     = "o"
)

// target selects the broker groups a command writes to or reads from.
type target struct {
	cluster    string
	brokerName string
}

// register adds -c/--cluster and -B/--broker-name.
func (t *target) register(fs *pflag.FlagSet) {
	fs.StringVarP(&t.cluster, "cluster", shortCluster, "", "cluster (brokerClusterName); default every cluster")
	addBrokerName(fs, &t.brokerName, "broker group (brokerName); default every group")
}

// addBrokerName adds -B/--broker-name.
func addBrokerName(fs *pflag.FlagSet, v *string, usage string) {
	fs.StringVarP(v, "broker-name", shortBrokerName, "", usage)
}

// addOldBrokerGroup keeps --broker-group, the earlier name of --broker-name in
// the consumer commands, working (hidden, with a deprecation notice). It was
// never ambiguous, unlike the -g/--group that meant a broker group elsewhere.
func addOldBrokerGroup(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "broker-group", "", "old name of --broker-name")
	_ = fs.MarkDeprecated("broker-group", "use -B/--broker-name")
}

// addConsumerGroup adds -g/--group.
func addConsumerGroup(fs *pflag.FlagSet, v *string) {
	fs.StringVarP(v, "group", shortGroup, "", "consumer group")
}

// addTopic adds -t/--topic.
func addTopic(fs *pflag.FlagSet, v *string, usage string) {
	fs.StringVarP(v, "topic", shortTopic, "", usage)
}

// subject is what a command acts on: its one argument or, as in mqadmin, the
// flag (-t TOPIC, -g GROUP). Both may be given only when they agree.
func subject(cmd *cobra.Command, args []string, flag, what string) (string, error) {
	fromFlag, _ := cmd.Flags().GetString(flag)
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	switch {
	case len(args) == 1 && fromFlag != "" && fromFlag != args[0]:
		return "", fmt.Errorf("%s: %s given twice: argument %q and --%s=%q", path, what, args[0], flag, fromFlag)
	case len(args) == 1:
		return args[0], nil
	case fromFlag != "":
		return fromFlag, nil
	}
	f := cmd.Flags().Lookup(flag)
	return "", fmt.Errorf("%s needs the %s: as its argument or with -%s/--%s", path, what, f.Shorthand, flag)
}

// flagErrorHint explains the flags that changed meaning: -g/--group named a
// broker group in topic, group list, raft and acl commands before it meant a
// consumer group everywhere.
func flagErrorHint(cmd *cobra.Command, err error) error {
	msg := err.Error()
	unknownG := strings.Contains(msg, "unknown shorthand flag: '"+shortGroup+"'") || strings.Contains(msg, "unknown flag: --group")
	if unknownG && cmd.Flags().Lookup("broker-name") != nil {
		return fmt.Errorf("%w (-g/--group is a consumer group in every admin command; name a broker group with -B/--broker-name)", err)
	}
	return err
}

// ifChanged returns v when the flag name was given on the command line, else
// nil: a patch field that is nil leaves the stored value as it is.
func ifChanged[T any](fl *pflag.FlagSet, name string, v *T) *T {
	if fl.Changed(name) {
		return v
	}
	return nil
}
