package clientapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// checkClientBody is CHECK_CLIENT_CONFIG's body (CheckClientRequestBody).
type checkClientBody struct {
	ClientID         string                `json:"clientId"`
	Group            string                `json:"group"`
	SubscriptionData *clients.Subscription `json:"subscriptionData"`
}

// handleCheckClientConfig serves CHECK_CLIENT_CONFIG (46), which Java push and
// lite-pull consumers send at start for every subscription that is not TAG, and
// whose start fails on any answer but SUCCESS. SQL92 is always enabled here
// (Apache answers SYSTEM_ERROR while enablePropertyFilter is false), so the
// answer is SUCCESS unless the expression does not compile or its type is
// unknown: SUBSCRIPTION_PARSE_FAILED, naming the topic and the reason. No body,
// or no subscription in it, is SUCCESS, as in Apache.
func (a *API) handleCheckClientConfig(_ context.Context, req *route.Request) (*transport.Command, error) {
	if len(req.Body) == 0 {
		return route.OK(nil, nil), nil
	}
	var body checkClientBody
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return nil, fmt.Errorf("%w: CHECK_CLIENT_CONFIG body: %v", route.ErrBadHeader, err)
	}
	if body.SubscriptionData != nil {
		if err := clients.CheckSubscription(*body.SubscriptionData); err != nil {
			return nil, fmt.Errorf("client %s group %s: %w", body.ClientID, body.Group, err)
		}
	}
	return route.OK(nil, nil), nil
}
