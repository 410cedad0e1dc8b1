package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

func quietClientLogs() { rlog.SetLogLevel("error") }

// instanceName gives every client of a run its own name: the Go client caches
// its clients by instance name, and two runs in one process (tests) must not
// share one.
func instanceName(kind string) string {
	return "rocketraft-bench-" + kind + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// commitAll is the transaction listener of a bench run: every local
// transaction succeeds, and a check-back (a lost END_TRANSACTION) commits too.
type commitAll struct{}

func (commitAll) ExecuteLocalTransaction(*primitive.Message) primitive.LocalTransactionState {
	return primitive.CommitMessageState
}

func (commitAll) CheckLocalTransaction(*primitive.MessageExt) primitive.LocalTransactionState {
	return primitive.CommitMessageState
}

// errGoSend is a send the rocketmq-go client answered with a status other than SEND_OK.
var errGoSend = errors.New("bench: send not acknowledged")

// produceGo runs the load with the official rocketmq-client-go producer. Its
// default queue selector goes round-robin over every write queue of the route.
func produceGo(ctx context.Context, o ProduceOptions, r *runner) error {
	quietClientLogs()
	useTLS, err := goClientTLS(o.TLS)
	if err != nil {
		return err
	}
	opts := []producer.Option{
		producer.WithNameServer(o.Namesrv),
		producer.WithTls(useTLS),
		producer.WithCredentials(primitive.Credentials{AccessKey: o.Credentials.AccessKey, SecretKey: o.Credentials.SecretKey}),
		producer.WithGroupName(o.Group),
		producer.WithInstanceName(instanceName("producer")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(sendTimeout),
	}
	sh := newShape(o, time.Now())
	size := int64(len(sh.body))
	if o.Transaction {
		tp, err := rocketmq.NewTransactionProducer(commitAll{}, opts...)
		if err != nil {
			return err
		}
		if err := tp.Start(); err != nil {
			return fmt.Errorf("start transaction producer: %w", err)
		}
		defer func() { _ = shutdownClient("transaction producer", tp.Shutdown) }()
		return r.run(ctx, 1, func(ctx context.Context, op op) (int64, error) {
			res, err := tp.SendMessageInTransaction(ctx, sh.goMessage(op.first))
			switch {
			case err != nil:
				return 0, err
			case res.Status != primitive.SendOK || res.State != primitive.CommitMessageState:
				return 0, fmt.Errorf("%w: status %d, transaction state %d", errGoSend, res.Status, res.State)
			}
			return size, nil
		})
	}
	p, err := rocketmq.NewProducer(opts...)
	if err != nil {
		return err
	}
	if err := p.Start(); err != nil {
		return fmt.Errorf("start producer: %w", err)
	}
	defer func() { _ = shutdownClient("producer", p.Shutdown) }()
	return r.run(ctx, 1, func(ctx context.Context, op op) (int64, error) {
		msgs := make([]*primitive.Message, op.msgs)
		for i := range msgs {
			msgs[i] = sh.goMessage(op.first + int64(i))
		}
		res, err := p.SendSync(ctx, msgs...)
		switch {
		case err != nil:
			return 0, err
		case res.Status != primitive.SendOK:
			return 0, fmt.Errorf("%w: status %d", errGoSend, res.Status)
		}
		return int64(op.msgs) * size, nil
	})
}
