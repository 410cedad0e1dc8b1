package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Client selects the producer implementation.
type Client string

const (
	// ClientNative is the project's own client: remoting requests over
	// transport.Client, routed through the nameserver, with no client-side
	// retries or rebalancing. It measures the brokers more than a client.
	ClientNative Client = "native"
	// ClientRocketMQGo is the official github.com/apache/rocketmq-client-go/v2.
	ClientRocketMQGo Client = "rocketmq-go"
)

// Mode selects how each producer issues sends.
type Mode string

const (
	ModeSync  Mode = "sync"  // one send at a time per producer
	ModeAsync Mode = "async" // up to Window sends in flight per producer
)

// route is the leader address of every broker group that serves the topic, with
// its write queue count.
type route struct {
	addrs  []string
	queues []int32
}

func resolveRoute(ctx context.Context, ns *nameserver.Client, namesrv []string, topic string) (route, error) {
	var lastErr error
	for _, lookup := range []string{topic, "TBW102"} {
		for _, addr := range namesrv {
			rd, err := ns.GetRoute(ctx, addr, lookup)
			if err != nil {
				lastErr = err
				continue
			}
			var r route
			for _, bd := range rd.BrokerDatas {
				master, ok := bd.BrokerAddrs[nameserver.MasterID]
				if !ok {
					continue
				}
				for _, qd := range rd.QueueDatas {
					if qd.BrokerName == bd.BrokerName && qd.WriteQueueNums > 0 {
						r.addrs = append(r.addrs, master)
						r.queues = append(r.queues, min(qd.WriteQueueNums, 4))
					}
				}
			}
			if len(r.addrs) > 0 {
				return r, nil
			}
			lastErr = fmt.Errorf("route of %s has no leader (brokerId 0)", lookup)
		}
	}
	return route{}, fmt.Errorf("bench: no route for topic %s: %w", topic, lastErr)
}

// encodeBatchBody lays out SEND_BATCH_MESSAGE elements (MessageDecoder.encodeMessage).
func encodeBatchBody(bodies [][]byte, props []string) []byte {
	var b []byte
	for i, body := range bodies {
		total := 22 + len(body) + len(props[i])
		var hdr [20]byte
		binary.BigEndian.PutUint32(hdr[0:], uint32(total))
		binary.BigEndian.PutUint32(hdr[16:], uint32(len(body)))
		b = append(b, hdr[:]...)
		b = append(b, body...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(props[i])))
		b = append(b, props[i]...)
	}
	return b
}

// produceNative runs the load with the project's own client.
func produceNative(ctx context.Context, o ProduceOptions) (Result, error) {
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: 3 * time.Second, TLS: o.TLS})
	defer tc.Close()
	ns := nameserver.NewClient(tc)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	rt, err := resolveRoute(rctx, ns, o.Namesrv, o.Topic)
	cancel()
	if err != nil {
		return Result{}, err
	}
	body := make([]byte, o.MessageSize)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	window := max(1, o.Window)
	if o.Mode != ModeAsync {
		window = 1
	}
	var sent, failed, next atomic.Int64
	lat := &latencies{}
	start := time.Now()
	deadline := start.Add(o.Duration)
	claim := func() (int64, bool) {
		if ctx.Err() != nil || (o.Count == 0 && time.Now().After(deadline)) {
			return 0, false
		}
		n := next.Add(int64(o.Batch))
		if o.Count > 0 && n > int64(o.Count) {
			return 0, false
		}
		return n - int64(o.Batch), true
	}
	send := func(first int64) {
		target := int(first/int64(o.Batch)) % len(rt.addrs)
		queue := int32(first/int64(o.Batch)) % rt.queues[target]
		ext := map[string]string{
			"producerGroup": o.Group, "topic": o.Topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
			"queueId": strconv.Itoa(int(queue)), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
			"flag": "0", "reconsumeTimes": "0", "unitMode": "false", "maxReconsumeTimes": "0", "batch": "false",
		}
		code := transport.SendMessage
		var payload []byte
		if o.Batch > 1 {
			code, ext["batch"] = transport.SendBatchMessage, "true"
			bodies, props := make([][]byte, o.Batch), make([]string, o.Batch)
			for i := range bodies {
				bodies[i], props[i] = body, store.EncodeProperties(map[string]string{store.PropertyKeys: "k" + strconv.FormatInt(first+int64(i), 10)})
			}
			payload = encodeBatchBody(bodies, props)
		} else {
			ext["properties"] = store.EncodeProperties(map[string]string{
				store.PropertyKeys: "k" + strconv.FormatInt(first, 10), store.PropertyUniqKey: fmt.Sprintf("BENCH%027d", first)})
			payload = body
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		t0 := time.Now()
		resp, err := tc.Invoke(sctx, rt.addrs[target], transport.NewRequest(code, o.Credentials.SignExt(ext, payload), payload))
		if err != nil || resp.ResponseCode() != transport.Success {
			failed.Add(int64(o.Batch))
			return
		}
		lat.add(time.Since(t0))
		sent.Add(int64(o.Batch))
	}
	var wg sync.WaitGroup
	for p := 0; p < o.Producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots := make(chan struct{}, window)
			var inflight sync.WaitGroup
			for {
				first, ok := claim()
				if !ok {
					break
				}
				slots <- struct{}{}
				inflight.Add(1)
				go func() {
					defer func() { <-slots; inflight.Done() }()
					send(first)
				}()
			}
			inflight.Wait()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	progress(o.Out, done, start, &sent, &failed, lat, o.MessageSize)
	return summarize(o.Out, start, sent.Load(), failed.Load(), lat, o.MessageSize, "latency histogram (per send call):"), nil
}
