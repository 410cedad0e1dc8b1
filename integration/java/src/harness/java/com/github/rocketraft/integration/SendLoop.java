package com.github.rocketraft.integration;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends in a background thread, one request at a time with a pause, until stopped, and keeps what
 * the broker acknowledged: the keys a send returned as SEND_OK, with the time. A failed send (an
 * exception, a non-OK status) is recorded and the loop goes on with the next message, as an
 * application would; its keys do not count as acknowledged. Run across a leader kill, the loop
 * has sends in flight when the leader dies.
 */
final class SendLoop implements AutoCloseable {

    /** One send of message i; returns the acknowledged keys (more than one for a batch). */
    @FunctionalInterface
    interface Sender {
        List<String> send(int i) throws Exception;
    }

    private final String name;
    private final Sender sender;
    private final Duration pause;
    private final Map<String, Long> acked = new ConcurrentHashMap<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final AtomicInteger attempts = new AtomicInteger();
    private volatile boolean stop;
    private volatile long markMillis = Long.MAX_VALUE;
    private final Thread thread;

    SendLoop(String name, Duration pause, Sender sender) {
        this.name = name;
        this.sender = sender;
        this.pause = pause;
        this.thread = new Thread(this::run, "send-loop-" + name);
        thread.setDaemon(true);
    }

    SendLoop start() {
        thread.start();
        return this;
    }

    private void run() {
        while (!stop) {
            int i = attempts.getAndIncrement();
            try {
                List<String> keys = sender.send(i);
                long now = System.currentTimeMillis();
                for (String k : keys) {
                    acked.put(k, now);
                }
            } catch (Exception e) {
                failures.add(i + ": " + e);
            }
            try {
                Thread.sleep(pause.toMillis());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** From now on {@link #ackedSinceMark()} counts. */
    void mark() {
        markMillis = System.currentTimeMillis();
    }

    int ackedSinceMark() {
        long m = markMillis;
        return (int) acked.values().stream().filter(t -> t >= m).count();
    }

    /** Waits until n keys were acknowledged in all. */
    void awaitAcked(int n, Duration timeout) throws InterruptedException {
        await(() -> acked.size() >= n, timeout, n + " acknowledged");
    }

    /** Waits until n keys were acknowledged since {@link #mark()}. */
    void awaitAckedSinceMark(int n, Duration timeout) throws InterruptedException {
        await(() -> ackedSinceMark() >= n, timeout, n + " acknowledged since the mark");
    }

    private void await(java.util.function.BooleanSupplier done, Duration timeout, String what) throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("send loop " + name + ": not " + what + " within " + timeout + " (" + acked.size()
                        + " acknowledged of " + attempts.get() + " attempts; last failures " + lastFailures(5) + ")");
            }
            Thread.sleep(50);
        }
    }

    /** Stops the loop and waits for its send in flight. */
    void stop() throws InterruptedException {
        stop = true;
        thread.join(30_000);
    }

    List<String> acked() {
        return new ArrayList<>(acked.keySet());
    }

    int attempts() {
        return attempts.get();
    }

    List<String> failures() {
        return List.copyOf(failures);
    }

    List<String> lastFailures(int n) {
        List<String> f = failures();
        return f.subList(Math.max(0, f.size() - n), f.size());
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
