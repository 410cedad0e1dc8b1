package broker

import (
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// vipExcluded are the codes Apache's fast server has no processor for: pulls
// fall through to its admin processor's default branch, which answers
// REQUEST_CODE_NOT_SUPPORTED. Clients never send them there (pulls go to the
// client port even with the VIP channel on), so answering is enough.
var vipExcluded = []transport.RequestCode{transport.PullMessage, transport.LitePullMessage}

// The VIP channel is Apache's fastRemotingServer, which BrokerController opens
// on listenPort-2 unconditionally (4.9 and 5.x have no key to turn it off):
// clients with sendMessageWithVIPChannel (and rocketmq-dashboard, by default)
// rewrite a broker's ip:port to ip:port-2 themselves (MixAll.brokerVIPChannel)
// for sends and admin calls. The broker still registers and stamps the client
// port; config.Broker.VIPPort says where the channel listens.

// newVIPServer is the VIP channel's server: the same stages and forwarding as
// the client port, built from the table minus pulls, with the client port's
// TLS mode and connection bookkeeping. nil when cfg.VIPListenAddr is "".
func (b *Broker) newVIPServer(table *route.Table, fwd route.Stage, stages []route.Stage) *transport.Server {
	if b.cfg.VIPListenAddr == "" {
		return nil
	}
	return transport.NewServer(transport.ServerConfig{
		Addr:        b.cfg.VIPListenAddr,
		Logger:      b.log.Named("vip"),
		OnConnClose: b.onConnClose,
		TLS:         b.cfg.TLS,
	}, table.Without(vipExcluded...).Serve(fwd, stages...))
}

// VIPAddr is the address the VIP channel listens on, "" when it is off.
func (b *Broker) VIPAddr() string {
	if b.vipServer == nil {
		return ""
	}
	return b.vipServer.Addr()
}
