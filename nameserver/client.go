package nameserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// Invoker is the part of transport.Client this client needs. The broker passes
// its own *transport.Client so the registration shares its connections.
type Invoker interface {
	Invoke(ctx context.Context, addr string, req *transport.Command) (*transport.Command, error)
	InvokeOneway(ctx context.Context, addr string, req *transport.Command) error
}

// Client speaks the nameserver requests a broker and the admin CLI send. Every
// method addresses one nameserver; callers fan out to all of them. It is safe for
// concurrent use if the Invoker is.
type Client struct {
	inv  Invoker
	cred sign.Credentials
}

// NewClient wraps inv; the caller keeps ownership of it (and closes it).
func NewClient(inv Invoker) *Client { return &Client{inv: inv} }

// WithCredentials returns a client that signs every request it sends (ACL 1.0,
// as AclClientRPCHook does): a broker with BrokerCredentials, so a nameserver
// with brokerAuthFile accepts its registrations; an admin tool with an admin
// account, so a nameserver with aclEnable accepts DELETE_TOPIC_IN_NAMESRV.
// Empty credentials sign nothing.
func (c *Client) WithCredentials(cred sign.Credentials) *Client {
	return &Client{inv: c.inv, cred: cred}
}

// request builds a request, signed when the client has credentials.
func (c *Client) request(code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
	return transport.NewRequest(code, c.cred.SignExt(ext, body), body)
}

// call sends req and returns the response if it is a success.
func (c *Client) call(ctx context.Context, op, addr string, req *transport.Command) (*transport.Command, error) {
	resp, err := c.inv.Invoke(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("%s nameserver=%s: %w", op, addr, err)
	}
	if resp.ResponseCode() != transport.Success {
		return resp, fmt.Errorf("%s nameserver=%s: code=%s remark=%q: %w",
			op, addr, resp.ResponseCode(), resp.Remark, ErrResponse)
	}
	return resp, nil
}

// RegisterBroker sends REGISTER_BROKER and waits for the answer. A registration
// fenced by a newer master's stateVersion returns an error wrapping both
// ErrResponse and ErrStaleStateVersion.
func (c *Client) RegisterBroker(ctx context.Context, addr string, req RegisterRequest) (RegisterResult, error) {
	ext, body, err := encodeRegister(req)
	if err != nil {
		return RegisterResult{}, fmt.Errorf("register broker=%s: %w", req.BrokerName, err)
	}
	resp, err := c.call(ctx, "register broker="+req.BrokerName, addr, c.request(transport.RegisterBroker, ext, body))
	if err != nil {
		if resp != nil && resp.Field(extFenced) == "true" {
			return RegisterResult{}, fmt.Errorf("%w (%w)", err, ErrStaleStateVersion)
		}
		return RegisterResult{}, err
	}
	return RegisterResult{HAServerAddr: resp.Field(extHAServerAddr), MasterAddr: resp.Field(extMasterAddr)}, nil
}

// RegisterBrokerOneway sends REGISTER_BROKER without waiting, as RocketMQ brokers
// do right after a role change; the periodic registration confirms it.
func (c *Client) RegisterBrokerOneway(ctx context.Context, addr string, req RegisterRequest) error {
	ext, body, err := encodeRegister(req)
	if err != nil {
		return fmt.Errorf("register broker=%s: %w", req.BrokerName, err)
	}
	if err := c.inv.InvokeOneway(ctx, addr, c.request(transport.RegisterBroker, ext, body)); err != nil {
		return fmt.Errorf("register broker=%s oneway nameserver=%s: %w", req.BrokerName, addr, err)
	}
	return nil
}

// UnregisterBroker sends UNREGISTER_BROKER.
func (c *Client) UnregisterBroker(ctx context.Context, addr string, req UnregisterRequest) error {
	_, err := c.call(ctx, "unregister broker="+req.BrokerName, addr,
		c.request(transport.UnregisterBroker, encodeUnregister(req), nil))
	return err
}

// GetRoute sends GET_ROUTEINFO_BY_TOPIC. A missing route is ErrTopicNotExist.
func (c *Client) GetRoute(ctx context.Context, addr, topic string) (TopicRouteData, error) {
	// acceptStandardJsonOnly asks a Java nameserver for quoted brokerAddrs keys.
	req := c.request(transport.GetRouteInfoByTopic,
		map[string]string{extTopic: topic, "acceptStandardJsonOnly": "true"}, nil)
	resp, err := c.inv.Invoke(ctx, addr, req)
	if err != nil {
		return TopicRouteData{}, fmt.Errorf("get route topic=%s nameserver=%s: %w", topic, addr, err)
	}
	switch resp.ResponseCode() {
	case transport.Success:
	case transport.TopicNotExist:
		return TopicRouteData{}, fmt.Errorf("get route topic=%s nameserver=%s: %w", topic, addr, ErrTopicNotExist)
	default:
		return TopicRouteData{}, fmt.Errorf("get route topic=%s nameserver=%s: code=%s remark=%q: %w",
			topic, addr, resp.ResponseCode(), resp.Remark, ErrResponse)
	}
	var route TopicRouteData
	if err := unmarshalLenient(resp.Body, &route); err != nil {
		return TopicRouteData{}, fmt.Errorf("get route topic=%s nameserver=%s: decode: %v: %w", topic, addr, err, ErrResponse)
	}
	return route, nil
}

// GetClusterInfo sends GET_BROKER_CLUSTER_INFO.
func (c *Client) GetClusterInfo(ctx context.Context, addr string) (ClusterInfo, error) {
	resp, err := c.call(ctx, "get cluster info", addr, c.request(transport.GetBrokerClusterInfo, nil, nil))
	if err != nil {
		return ClusterInfo{}, err
	}
	var ci ClusterInfo
	if err := unmarshalLenient(resp.Body, &ci); err != nil {
		return ClusterInfo{}, fmt.Errorf("get cluster info nameserver=%s: decode: %v: %w", addr, err, ErrResponse)
	}
	return ci, nil
}

// GetTopicList sends GET_ALL_TOPIC_LIST_FROM_NAMESERVER.
func (c *Client) GetTopicList(ctx context.Context, addr string) ([]string, error) {
	resp, err := c.call(ctx, "get topic list", addr,
		c.request(transport.GetAllTopicListFromNameServer, nil, nil))
	if err != nil {
		return nil, err
	}
	var tl TopicList
	if err := json.Unmarshal(resp.Body, &tl); err != nil {
		return nil, fmt.Errorf("get topic list nameserver=%s: decode: %v: %w", addr, err, ErrResponse)
	}
	return tl.TopicList, nil
}

// DeleteTopic sends DELETE_TOPIC_IN_NAMESRV; cluster "" deletes the topic from
// every cluster.
func (c *Client) DeleteTopic(ctx context.Context, addr, topic, cluster string) error {
	ext := map[string]string{extTopic: topic}
	if cluster != "" {
		ext[extClusterName] = cluster
	}
	_, err := c.call(ctx, "delete topic="+topic, addr, c.request(transport.DeleteTopicInNameSrv, ext, nil))
	return err
}
