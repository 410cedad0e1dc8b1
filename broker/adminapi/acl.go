package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/transport"
)

// DefaultACLFilePath is the path the ACL codes report and accept for the
// group's one replicated document when Config.ACLFilePath is empty (Apache's
// default file, relative to ROCKETMQ_HOME).
const DefaultACLFilePath = "conf/plain_acl.yml"

// aclConflictRetries: a version conflict means another ACL change was applied
// between reading the document and proposing the edit (the edits of one leader
// are serialised by aclMu, so only a change that straddles a leader change
// can); the edit is redone over the newer document this many times.
const aclConflictRetries = 3

// editACL applies edit to the ACL in force and replicates the result, the read
// and the proposal serialised on this node. failed is the code's sentinel
// (ErrACLUpdate, …): refusals are wrapped in it, the replication outcomes
// (not leader, busy, unknown) pass as they are. An edit that returns no ACL
// and no error changes nothing: nothing is proposed.
func (a *API) editACL(ctx context.Context, failed error, edit func(*auth.ACL) (*auth.ACL, error)) error {
	if a.d.ACL == nil {
		return route.ErrACLDisabled
	}
	a.aclMu.Lock()
	defer a.aclMu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, configChangeTimeout)
	defer cancel()
	var err error
	for range aclConflictRetries {
		var next *auth.ACL
		if next, err = edit(a.d.ACL.ACL()); err != nil {
			return fmt.Errorf("%w: %w", failed, err)
		}
		if next == nil {
			return nil
		}
		var doc []byte
		if doc, err = next.Document(); err != nil {
			return fmt.Errorf("%w: %w", failed, err)
		}
		if err = a.d.Replica.SetACL(cctx, doc); !errors.Is(err, fsm.ErrACLVersionConflict) {
			break
		}
	}
	if errors.Is(err, replica.ErrConfigRefused) {
		return fmt.Errorf("%w: %w", failed, err)
	}
	return err
}

// updateACL serves UPDATE_AND_CREATE_ACL_CONFIG (50) on the leader: create or
// update one account with Apache's semantics (auth.AccountUpdate).
func (a *API) updateACL(ctx context.Context, req *route.Request) (*transport.Command, error) {
	ext := req.Fields()
	opt := func(k string) *string {
		if v, ok := ext[k]; ok {
			return &v
		}
		return nil
	}
	f := route.NewFields(ext)
	u := auth.AccountUpdate{
		AccessKey: ext["accessKey"], SecretKey: ext["secretKey"], Admin: f.Bool("admin", false),
		WhiteRemoteAddress: opt("whiteRemoteAddress"), DefaultTopicPerm: opt("defaultTopicPerm"),
		DefaultGroupPerm: opt("defaultGroupPerm"), TopicPerms: opt("topicPerms"), GroupPerms: opt("groupPerms"),
	}
	if f.Err != nil {
		return nil, fmt.Errorf("%w: %w", route.ErrACLUpdate, f.Err)
	}
	if err := a.editACL(ctx, route.ErrACLUpdate, func(acl *auth.ACL) (*auth.ACL, error) { return acl.WithAccount(u) }); err != nil {
		return nil, err
	}
	a.log.Info("ACL account updated", "accessKey", u.AccessKey, "admin", u.Admin)
	return transport.NewResponse(transport.Success, ""), nil
}

// deleteACL serves DELETE_ACL_CONFIG (51) on the leader. An access key with no
// account is answered 0 and changes nothing, where Apache answers 210: mqadmin
// `deleteAclConfig -c` sends the delete to every node of every group (masters
// and slaves, CommandUtil.fetchMasterAndSlaveAddrByClusterName), each Apache
// broker deleting from its own file, but a rocketraft group has one replicated
// document, so every node after the first would find the account gone and the
// tool would report the delete failed.
func (a *API) deleteACL(ctx context.Context, req *route.Request) (*transport.Command, error) {
	ak := req.Field("accessKey")
	if ak == "" {
		return nil, fmt.Errorf("%w: %w: accessKey is required", route.ErrACLDelete, route.ErrBadHeader)
	}
	absent := false
	err := a.editACL(ctx, route.ErrACLDelete, func(acl *auth.ACL) (*auth.ACL, error) {
		next, err := acl.WithoutAccount(ak)
		if errors.Is(err, auth.ErrNoAccount) {
			absent = true
			return nil, nil
		}
		return next, err
	})
	if err != nil {
		return nil, err
	}
	if absent {
		a.log.Info("ACL delete of an absent account: nothing to do", "accessKey", ak)
	} else {
		a.log.Info("ACL account deleted", "accessKey", ak)
	}
	return transport.NewResponse(transport.Success, ""), nil
}

// updateGlobalWhite serves UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53) on the
// leader. aclFileFullPath is optional (Apache requires it; mqadmin without -p
// sends none): the group has one document, whatever path is named.
func (a *API) updateGlobalWhite(ctx context.Context, req *route.Request) (*transport.Command, error) {
	addrs := strings.Split(req.Field("globalWhiteAddrs"), ",")
	if err := a.editACL(ctx, route.ErrACLGlobalWhite, func(acl *auth.ACL) (*auth.ACL, error) { return acl.WithGlobalWhite(addrs) }); err != nil {
		return nil, err
	}
	a.log.Info("ACL global allow-list updated", "patterns", req.Field("globalWhiteAddrs"))
	return transport.NewResponse(transport.Success, ""), nil
}

// dataVersion is RocketMQ's DataVersion JSON.
type dataVersion struct {
	Timestamp int64  `json:"timestamp"`
	Counter   uint64 `json:"counter"`
}

// aclInfo serves GET_BROKER_CLUSTER_ACL_INFO (52) from this node: the version
// of the ACL in force (counter = replicated version, 0 for the aclFile;
// timestamp = when this node started enforcing it).
func (a *API) aclInfo(context.Context, *route.Request) (*transport.Command, error) {
	if a.d.ACL == nil {
		return nil, route.ErrACLDisabled
	}
	c := a.d.ACL.Current()
	v := dataVersion{Timestamp: c.Since.UnixMilli(), Counter: c.Version}
	version, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	all, err := json.Marshal(map[string]dataVersion{a.aclFilePath(): v}) // always an object: mqadmin iterates it
	if err != nil {
		return nil, err
	}
	return route.OK(map[string]string{
		"version": string(version), "allAclFileVersion": string(all),
		"brokerName": a.d.BrokerName, "brokerAddr": a.d.ClientAddr, "clusterName": a.d.ClusterName,
	}, nil), nil
}

// plainAccessConfig is Apache's PlainAccessConfig as GET_BROKER_CLUSTER_ACL_CONFIG
// (54) sends it, SecretKey always blank.
type plainAccessConfig struct {
	AccessKey          string   `json:"accessKey"`
	SecretKey          string   `json:"secretKey"`
	WhiteRemoteAddress string   `json:"whiteRemoteAddress"`
	Admin              bool     `json:"admin"`
	DefaultTopicPerm   string   `json:"defaultTopicPerm"`
	DefaultGroupPerm   string   `json:"defaultGroupPerm"`
	TopicPerms         []string `json:"topicPerms"`
	GroupPerms         []string `json:"groupPerms"`
}

// aclConfig serves GET_BROKER_CLUSTER_ACL_CONFIG (54) from this node: Apache's
// AclConfig body, but never a secret (Apache sends them; this answers "" for
// every secretKey, and auth.AccountInfo has no secret to leak).
func (a *API) aclConfig(context.Context, *route.Request) (*transport.Command, error) {
	if a.d.ACL == nil {
		return nil, route.ErrACLDisabled
	}
	acl := a.d.ACL.ACL()
	infos := acl.Accounts()
	body := struct {
		GlobalWhiteAddrs   []string            `json:"globalWhiteAddrs"`
		PlainAccessConfigs []plainAccessConfig `json:"plainAccessConfigs"`
	}{GlobalWhiteAddrs: acl.GlobalWhite(), PlainAccessConfigs: make([]plainAccessConfig, len(infos))}
	for i, in := range infos {
		body.PlainAccessConfigs[i] = plainAccessConfig{AccessKey: in.AccessKey, WhiteRemoteAddress: in.WhiteRemoteAddress,
			Admin: in.Admin, DefaultTopicPerm: in.DefaultTopicPerm, DefaultGroupPerm: in.DefaultGroupPerm,
			TopicPerms: in.TopicPerms, GroupPerms: in.GroupPerms}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return route.OK(nil, b), nil
}

func (a *API) aclFilePath() string {
	if a.d.ACLFilePath != "" {
		return a.d.ACLFilePath
	}
	return DefaultACLFilePath
}
