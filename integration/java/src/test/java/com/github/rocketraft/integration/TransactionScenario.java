package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * TransactionMQProducer: half messages (310 with TRAN_MSG), then END_TRANSACTION (37). "commit"
 * messages commit at once, "rollback" ones roll back, "check" ones answer UNKNOW and are committed
 * when the broker asks (CHECK_TRANSACTION_STATE 39). Committed messages arrive, rolled-back ones
 * never, and the broker did ask about every "check" message. Needs a cluster with a short
 * transactionTimeOut and transactionCheckInterval ({@link MatrixTest}).
 */
final class TransactionScenario extends Scenario {

    static final int PER_KIND = 6;
    private final Inbox inbox = new Inbox();
    private final List<String> committed = new CopyOnWriteArrayList<>();
    private final List<String> rolledBack = new CopyOnWriteArrayList<>();
    private final Set<String> checked = ConcurrentHashMap.newKeySet();
    private TransactionMQProducer producer;

    TransactionScenario(RaftCluster cluster) {
        super(cluster, "Tx");
    }

    @Override
    void before() throws Exception {
        producer = configure(new TransactionMQProducer(n("P")), n("P"));
        producer.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                String body = new String(msg.getBody(), StandardCharsets.UTF_8);
                if (body.startsWith("commit")) {
                    return LocalTransactionState.COMMIT_MESSAGE;
                }
                if (body.startsWith("rollback")) {
                    return LocalTransactionState.ROLLBACK_MESSAGE;
                }
                return LocalTransactionState.UNKNOW;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                String body = new String(msg.getBody(), StandardCharsets.UTF_8);
                checked.add(Inbox.key(msg));
                return body.startsWith("check") ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE;
            }
        });
        producer.start();
        own(producer::shutdown);
        // A plain send creates the topic; consumers need its route.
        sendUntilOk(producer, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
        consumer(n("C"), n("T"), "tx", inbox);
        phase("a");
    }

    private void phase(String p) throws Exception {
        for (String kind : List.of("commit", "rollback", "check")) {
            for (int i = 0; i < PER_KIND; i++) {
                String key = sendHalf(kind + "-" + p + "-" + i);
                (kind.equals("rollback") ? rolledBack : committed).add(key);
            }
        }
    }

    /** Sends one half message until it is SEND_OK; returns its key. */
    private String sendHalf(String body) throws Exception {
        Instant deadline = Instant.now().plus(RECOVER_TIMEOUT);
        Exception last = null;
        while (Instant.now().isBefore(deadline)) {
            try {
                TransactionSendResult r = producer.sendMessageInTransaction(msg(n("T"), "tx", body), null);
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    return r.getMsgId();
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("half message " + body + " never SEND_OK within " + RECOVER_TIMEOUT + "; last " + last, last);
    }

    @Override
    void after() throws Exception {
        phase("b");
    }

    @Override
    void verify() throws Exception {
        assertAllConsumed(inbox, committed, name + " (committed, at once or on check-back)");
        for (String k : committed) {
            if (new String(inbox.first(k).msg().getBody(), StandardCharsets.UTF_8).startsWith("check")) {
                assertTrue(checked.contains(k), name + ": " + k + " was committed without a check-back");
            }
        }
        // Rollbacks were decided before the later commits were; give stragglers a second anyway.
        Thread.sleep(1000);
        for (String k : rolledBack) {
            assertTrue(inbox.first(k) == null, name + ": rolled-back " + k + " was delivered");
        }
    }
}
