package com.github.rocketraft.chaosload;

import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * The one writer of stdout: the Go harness (integration/chaos/java.go) parses every line, so
 * nothing else may print there (the client logs to files, see ChaosProducer). One tab-separated
 * line per event, flushed at once: a line still in a buffer when the JVM dies would be a send
 * the harness never heard of.
 *
 * <pre>
 * ready   client-version
 * call    client id attempt queueId callMicros
 * result  client id attempt status queueId queueOffset msgId offsetMsgId brokerAddr callMicros returnMicros code error
 * done    calls acked
 * error   message
 * </pre>
 *
 * A call line comes before its send leaves, so a send whose answer the process never printed
 * (it was killed) is still known to the harness, as an unknown outcome. status is the client's
 * SendStatus name (SEND_OK, FLUSH_DISK_TIMEOUT, …) or EXCEPTION, with code the broker's response
 * code for an MQBrokerException and -1 otherwise; the harness, not this process, decides what an
 * answer means for the checker, with the same rules as for its Go clients.
 */
final class Lines {
    static final int RESULT_FIELDS = 14;

    private final BufferedWriter out =
            new BufferedWriter(new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8));

    synchronized void print(Object... fields) {
        try {
            for (int i = 0; i < fields.length; i++) {
                if (i > 0) {
                    out.write('\t');
                }
                out.write(clean(String.valueOf(fields[i])));
            }
            out.write('\n');
            out.flush();
        } catch (IOException e) {
            // The harness is gone: nobody would record what we send next.
            throw new UncheckedIOException(e);
        }
    }

    /** Tabs and line breaks inside a field (an exception message) would shift the columns. */
    static String clean(String s) {
        return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }

    /** Wall-clock microseconds: the harness compares them with its own time.Now(). */
    static long nowMicros() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
    }
}
