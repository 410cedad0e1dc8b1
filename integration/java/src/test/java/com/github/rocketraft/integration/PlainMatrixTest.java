package com.github.rocketraft.integration;

import org.opentest4j.TestAbortedException;

/** Every {@link MatrixTest} case against a healthy group, one after another. */
class PlainMatrixTest extends MatrixTest {

    @Override
    void run(String caseName) throws Exception {
        Scenario s = CASES.get(caseName).apply(cluster);
        long t0 = System.currentTimeMillis();
        try (s) {
            s.before();
            s.after();
            s.verify();
        } catch (TestAbortedException e) {
            throw e;
        } catch (AssertionError | Exception e) {
            throw failure(s, "no fault", e);
        }
        System.out.println("[matrix] " + s.name + " " + Compat.clientVersion() + ": passed in " + (System.currentTimeMillis() - t0) + " ms");
    }
}
