package com.github.rocketraft.integration;

/** Every {@link MatrixTest} case against a healthy group. */
class PlainMatrixTest extends MatrixTest {
    PlainMatrixTest() {
        super(false);
    }
}
