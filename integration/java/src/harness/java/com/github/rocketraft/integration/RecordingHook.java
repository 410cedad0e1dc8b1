package com.github.rocketraft.integration;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * An {@link RPCHook} that runs another hook (the ACL signer, or none) and then records what each
 * request carried on the wire: its code and its extField names after signing, and the response
 * code. It lets a test state which request codes and header spellings the unmodified Java client
 * sent, instead of assuming it.
 */
final class RecordingHook implements RPCHook {

    /** One request as it left the client, and the code it was answered with (-1 if none). */
    record Call(int requestCode, Set<String> extFields, int responseCode) {}

    private final RPCHook signer; // may be null: an unsigned client
    private final List<Call> calls = new CopyOnWriteArrayList<>();

    RecordingHook(RPCHook signer) {
        this.signer = signer;
    }

    @Override
    public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
        if (signer != null) {
            signer.doBeforeRequest(remoteAddr, request);
        }
    }

    @Override
    public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
        if (signer != null) {
            signer.doAfterResponse(remoteAddr, request, response);
        }
        Map<String, String> ext = request.getExtFields();
        calls.add(new Call(request.getCode(), ext == null ? Set.of() : new TreeSet<>(ext.keySet()),
                response == null ? -1 : response.getCode()));
    }

    /** The answered requests with this request code, in the order their answers arrived. */
    List<Call> calls(int requestCode) {
        return calls.stream().filter(c -> c.requestCode() == requestCode).toList();
    }
}
