package com.github.rocketraft.integration;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Every message some consumer handed to the test, keyed by its UNIQ_KEY (what the producer's
 * SendResult.getMsgId() returned), with the time it arrived. Redeliveries are kept too
 * ({@link #deliveries()}), so that retry and order checks can see them.
 */
final class Inbox {

    /** One delivery: the message, who got it, and when. */
    record Delivery(MessageExt msg, String consumer, long atMillis) {}

    private final Map<String, Delivery> first = new ConcurrentHashMap<>();
    private final List<Delivery> all = new CopyOnWriteArrayList<>();

    static String key(MessageExt m) {
        String k = m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
        return k != null ? k : m.getMsgId();
    }

    void add(String consumer, MessageExt m) {
        Delivery d = new Delivery(m, consumer, System.currentTimeMillis());
        all.add(d);
        first.putIfAbsent(key(m), d);
    }

    void addAll(String consumer, Collection<MessageExt> ms) {
        for (MessageExt m : ms) {
            add(consumer, m);
        }
    }

    int distinct() {
        return first.size();
    }

    Delivery first(String key) {
        return first.get(key);
    }

    Map<String, Delivery> firsts() {
        return Map.copyOf(first);
    }

    List<Delivery> deliveries() {
        return List.copyOf(all);
    }

    boolean hasAll(Collection<String> keys) {
        return missing(keys).isEmpty();
    }

    /** Waits until every key arrived or the timeout passed; returns the keys still missing. */
    List<String> awaitAll(Collection<String> keys, Duration timeout) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        List<String> missing = missing(keys);
        while (!missing.isEmpty() && Instant.now().isBefore(deadline)) {
            Thread.sleep(100);
            missing = missing(keys);
        }
        return missing;
    }

    private List<String> missing(Collection<String> keys) {
        List<String> out = new ArrayList<>();
        for (String k : keys) {
            if (!first.containsKey(k)) {
                out.add(k);
            }
        }
        return out;
    }

    /** A short description of missing keys for an assertion message. */
    static String describe(List<String> missing, int total) {
        List<String> head = new ArrayList<>(new TreeSet<>(missing)).subList(0, Math.min(5, missing.size()));
        return missing.size() + " of " + total + " acknowledged messages never consumed, e.g. " + head;
    }
}
