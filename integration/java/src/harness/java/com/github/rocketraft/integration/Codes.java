package com.github.rocketraft.integration;

/**
 * The request and response codes the suites assert on. RocketMQ's own constants
 * ({@code RequestCode}, {@code ResponseCode}) moved from {@code org.apache.rocketmq.common.protocol}
 * (4.9) to {@code org.apache.rocketmq.remoting.protocol} (5.x); the numbers are the wire protocol
 * and did not move, so one copy of them lets a suite compile against both client lines.
 */
final class Codes {

    private Codes() {}

    static final int SEND_MESSAGE = 10;
    static final int SEND_MESSAGE_V2 = 310;
    static final int SEND_BATCH_MESSAGE = 320;

    static final int SUCCESS = 0;
    static final int MESSAGE_ILLEGAL = 13;
    static final int NO_PERMISSION = 16;
}
