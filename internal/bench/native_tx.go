package bench

import (
	"context"
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// commitOrRollback values of END_TRANSACTION (MessageSysFlag).
const endCommit = store.SysFlagTxCommit

// commit ends the transaction of the half message that resp acknowledged:
// END_TRANSACTION names it by its CommitLog offset (from the offset msgId) and
// its half-queue offset (queueOffset). The Java and Go clients send it oneway;
// the native client waits for the answer, so a send counts only once its
// message is committed, and the latency includes the commit's replication.
func (s *nativeSender) commit(ctx context.Context, addr string, first int64, resp *transport.Command) error {
	_, off, err := store.ParseOffsetMsgID(resp.Field("msgId"))
	if err != nil {
		return fmt.Errorf("half message answer: %w", err)
	}
	ext := map[string]string{
		"producerGroup":        s.shape.group,
		"tranStateTableOffset": resp.Field("queueOffset"),
		"commitLogOffset":      strconv.FormatInt(int64(off), 10),
		"commitOrRollback":     strconv.Itoa(int(endCommit)),
		"fromTransactionCheck": "false",
		"msgId":                s.shape.uniqKey(first),
		"transactionId":        resp.Field("transactionId"),
	}
	req := transport.NewRequest(transport.EndTransaction, s.creds.SignExt(ext, nil), nil)
	req.Serialize = s.serialize
	end, err := s.tc.Invoke(ctx, addr, req)
	if err != nil {
		return fmt.Errorf("end transaction at %s: %w", addr, err)
	}
	if end.ResponseCode() != transport.Success {
		return fmt.Errorf("end transaction at %s: %s %s", addr, end.ResponseCode(), end.Remark)
	}
	return nil
}

// checkBackHandler answers the broker's CHECK_TRANSACTION_STATE, sent when it
// has a half message of group older than transactionTimeOut with no decision
// (our END_TRANSACTION was lost or failed): every bench transaction commits,
// so the answer is a oneway END_TRANSACTION commit, as the clients send it.
func checkBackHandler(group string, creds sign.Credentials) transport.Handler {
	return transport.HandlerFunc(func(_ context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
		if req.RequestCode() != transport.CheckTransactionState {
			return nil
		}
		ext := map[string]string{
			"producerGroup":        group,
			"tranStateTableOffset": req.Field("tranStateTableOffset"),
			"commitLogOffset":      req.Field("commitLogOffset"),
			"commitOrRollback":     strconv.Itoa(int(endCommit)),
			"fromTransactionCheck": "true",
			"msgId":                req.Field("msgId"),
			"transactionId":        req.Field("transactionId"),
		}
		_ = conn.InvokeOneway(transport.NewRequest(transport.EndTransaction, creds.SignExt(ext, nil), nil))
		return nil
	})
}
