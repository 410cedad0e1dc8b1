package com.github.rocketraft.integration;

/**
 * Every {@link MatrixTest} case with the leader SIGKILLed between its phases: whatever was
 * acknowledged before, during and after the kill must be consumed.
 */
class LeaderKillMatrixTest extends MatrixTest {
    LeaderKillMatrixTest() {
        super(true);
    }
}
