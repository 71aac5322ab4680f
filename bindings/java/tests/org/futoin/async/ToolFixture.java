package org.futoin.async;

import org.junit.After;
import org.junit.Before;

/**
 * The fixture most of the suite shares: a fresh {@link Tool} for each test,
 * closed after it. A test class that also requires no misuse report adds
 * its own {@code @After} (JUnit runs it before this class's, while the tool
 * is open).
 */
abstract class ToolFixture {
    protected Tool tool;

    @Before
    public void makeTool() {
        tool = new Tool();
    }

    @After
    public void closeTool() {
        tool.close();
    }
}
