package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Request/reply: DefaultMQProducer.request(msg, timeout) blocks until a responder answers. The
 * responder builds the reply with MessageUtil.createReplyMessage (which needs the broker-stamped
 * CLUSTER property) and sends it (SEND_REPLY_MESSAGE 324/325 to {@code <cluster>_REPLY_TOPIC});
 * the broker pushes it to the requester (PUSH_REPLY_MESSAGE_TO_CLIENT 326). A request counts as
 * acknowledged when its reply arrived; the reply must carry the request's body back.
 */
final class ReplyScenario extends Scenario {

    static final int PER_PHASE = 10;
    static final long REQUEST_TIMEOUT_MILLIS = 5000;
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private int answered;
    private DefaultMQProducer requester;

    ReplyScenario(RaftCluster cluster) {
        super(cluster, "Reply");
    }

    @Override
    void before() throws Exception {
        requester = producer(n("Req"));
        DefaultMQProducer replier = producer(n("Rep"));
        sendUntilOk(requester, msg(n("T"), "warm", "warm-up"), Duration.ofSeconds(60));
        DefaultMQPushConsumer responder = newConsumer(n("C"));
        responder.subscribe(n("T"), "request");
        responder.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                try {
                    byte[] body = ("reply-to-" + new String(m.getBody(), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
                    Message reply = MessageUtil.createReplyMessage(m, body);
                    replier.send(reply);
                } catch (Exception e) {
                    failures.add(e.toString());
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        responder.start();
        own(responder::shutdown);
        phase("a");
    }

    /**
     * The first request of a phase is retried until answered (after a fault the requester's route
     * and the new leader's producer table catch up); the next ones must all be answered.
     */
    private void phase(String p) throws Exception {
        Instant deadline = Instant.now().plus(RECOVER_TIMEOUT);
        Exception last = null;
        while (true) {
            try {
                request(p + "-first");
                break;
            } catch (Exception e) {
                last = e;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError(name + ": no request answered within " + RECOVER_TIMEOUT + " in phase " + p
                        + "; last " + last + "; responder failures " + failures, last);
            }
            Thread.sleep(200);
        }
        for (int i = 0; i < PER_PHASE; i++) {
            request(p + "-" + i);
        }
    }

    private void request(String body) throws Exception {
        Message reply = requester.request(msg(n("T"), "request", body), REQUEST_TIMEOUT_MILLIS);
        assertEquals("reply-to-" + body, new String(reply.getBody(), StandardCharsets.UTF_8), "reply body");
        answered++;
    }

    @Override
    void after() throws Exception {
        phase("b");
    }

    @Override
    void verify() {
        assertEquals(2 * (PER_PHASE + 1), answered, name + ": requests answered");
    }
}
