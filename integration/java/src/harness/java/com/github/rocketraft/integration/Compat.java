package com.github.rocketraft.integration;

import java.lang.reflect.Method;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.message.Message;

/**
 * What differs between the 4.9 and 5.x clients at the source level, in one place, so that every
 * suite compiles against both lines. 5.x moved {@code MessageModel} (and most protocol classes)
 * from {@code org.apache.rocketmq.common.protocol} to {@code org.apache.rocketmq.remoting.protocol}
 * and added {@code Message.setDeliverTimeMs}; those are reached by reflection here.
 */
final class Compat {

    private Compat() {}

    /** The client line under test, e.g. "V4_9_8" or "V5_5_0". */
    static String clientVersion() {
        return MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION);
    }

    static boolean isClient5() {
        return clientVersion().startsWith("V5");
    }

    /** {@code consumer.setMessageModel(MessageModel.BROADCASTING)} with whichever enum this client has. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void setBroadcasting(DefaultMQPushConsumer consumer) {
        try {
            Class<? extends Enum> model = (Class<? extends Enum>) DefaultMQPushConsumer.class.getMethod("getMessageModel").getReturnType();
            DefaultMQPushConsumer.class.getMethod("setMessageModel", model).invoke(consumer, Enum.valueOf(model, "BROADCASTING"));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this client has no DefaultMQPushConsumer.setMessageModel(MessageModel)", e);
        }
    }

    /** Message.setDeliverTimeMs (5.x timer messages), or null on a client without it (4.9). */
    static Method deliverTimeSetter() {
        try {
            return Message.class.getMethod("setDeliverTimeMs", long.class);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}
