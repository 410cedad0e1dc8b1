package com.github.rocketraft.integration;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports for a nameserver and a raft group, all below the kernel's ephemeral range
 * (32768 and up on Linux): a port there can be taken at any moment by the local end of an outgoing
 * connection, and a broker that binds it a second later then fails to start. The Go harness
 * (internal/proctest) picks from the same range for the same reason.
 */
final class Ports {
    private Ports() {}

    /**
     * Nameserver port, broker base and raft base. Node i listens on broker base+10*i plus each of
     * {@code brokerOffsets} (e.g. −2 for the VIP channel, +2 for admin HTTP) and on raft base+10*i;
     * every one of those is checked free.
     */
    static int[] pick(String what, int nodes, int... brokerOffsets) throws IOException {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 50; attempt++) {
            int ns = 12000 + rnd.nextInt(2000);
            int broker = 14010 + rnd.nextInt(850) * 10;
            int raft = 23010 + rnd.nextInt(850) * 10;
            List<Integer> want = new ArrayList<>(List.of(ns));
            for (int i = 0; i < nodes; i++) {
                for (int off : brokerOffsets) {
                    want.add(broker + 10 * i + off);
                }
                want.add(raft + 10 * i);
            }
            if (want.stream().allMatch(Ports::isFree)) {
                return new int[] {ns, broker, raft};
            }
        }
        throw new IOException("found no free set of ports for a " + what + " in 50 attempts");
    }

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
