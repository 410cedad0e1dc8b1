package com.github.rocketraft.integration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Why {@code MqadminAclTest} (src/test-4.9) has no 5.x run: Apache removed ACL 1.0 and its mqadmin
 * commands in 5.3.3 (RIP-77), so rocketmq-tools 5.5.0 has none of the commands that suite drives;
 * its ACL commands are ACL 2.0 ({@code createUser}, {@code createAcl}, … : request codes 3001–3010),
 * which rocketraft does not serve. This test checks that the 4.9 commands are really gone from the
 * 5.x tool (it fails if a later tools version brings them back, so the 4.9 suite can move over), and
 * then reports itself skipped with that reason. Signing a 5.x client with ACL 1.0 still works, and
 * {@code AclClientTest} runs on 5.x: rocketmq-client 5.x ships {@code AclClientRPCHook} itself.
 */
class MqadminAcl5xTest {

    private static final DevCluster.Account NONE = new DevCluster.Account("unused", "unusedSecret");

    @Test
    @DisplayName("rocketmq-tools 5.x has no ACL 1.0 commands (updateAclConfig, deleteAclConfig, clusterAclConfigVersion, updateGlobalWhiteAddr): MqadminAclTest is 4.9-only")
    void aclOneCommandsAreGoneFrom5x() throws Exception {
        for (String command : new String[] {"updateAclConfig", "deleteAclConfig", "clusterAclConfigVersion", "updateGlobalWhiteAddr"}) {
            // No cluster needed: MQAdminStartup answers an unknown command before connecting anywhere.
            Mqadmin.Result r = Mqadmin.run(NONE, command, "-n", "127.0.0.1:1");
            assertTrue(r.stdout().contains("The sub command " + command + " not exist"), r.toString());
        }
        Mqadmin.Result help = Mqadmin.run(NONE, "help", "createUser");
        assertFalse(help.stdout().contains("not exist"), "the ACL 2.0 command createUser is missing too: " + help);
        Assumptions.abort("rocketmq-tools " + Compat.clientVersion() + " has no ACL 1.0 commands (removed in 5.3.3, RIP-77);"
                + " its ACL 2.0 commands (codes 3001-3010) are not served by rocketraft");
    }
}
