'use strict';
// Trace context (futoin/trace.h) from JavaScript: as.setTrace() and
// as.trace() over the library's per-root context, as Python's
// test_trace.py and Java's TraceTest check it: each step a span under the
// one it runs in, across a step of C, newInstance() going on under the
// span of the step that made it, bad values refused with the reason.
const test = require('node:test');
const assert = require('node:assert');
const $as = require('../lib');

const T = $as.AsyncToolTest;
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

function fresh(t) {
    $as.installAsyncToolTest();
    T.resetEvents();
    t.after(() => {
        T.resetEvents();
        $as.installAsyncToolTest(false);
    });
}

test('set in a step, seen across a JS -> C -> JS chain, spans under their frames', (t) => {
    fresh(t);
    const seen = {};
    let child = null;
    const root = $as();
    root.add((as) => {
        assert.strictEqual(as.trace(), null);
        as.setTrace(TP);
        seen.setter = as.trace();
        as.success(3, 4);
    }).addForeign('c', 'libm.so.6', 'double hypot(double, double)')
        .add((as, h) => {
            seen.hypot = h;
            seen.after = as.trace();
            as.add((as) => {
                seen.inner = as.trace();
                as.success(6, 8);
            });
            as.addForeign('c', 'libm.so.6', 'double hypot(double, double)');
            as.add((as, h2) => {
                seen.hypot2 = h2;
                seen.inner2 = as.trace();
            });
        })
        .add((as) => {
            child = as.newInstance();
            seen.childRoot = child.trace();
            child.add((as) => {
                seen.child = as.trace();
            });
            child.execute();
        });
    root.execute();
    T.run();
    assert.deepStrictEqual(Object.keys(seen).sort(), ["after", "child", "childRoot", "hypot", "hypot2", "inner", "inner2", "setter"]);
    const { setter: s, after: a, inner: i, inner2: i2, child: c } = seen;
    assert.strictEqual(seen.hypot, 5);
    assert.strictEqual(seen.hypot2, 10);
    assert.strictEqual(s.traceId, TRACE_ID);
    assert.strictEqual(s.flags, 1);
    assert.strictEqual(s.parentSpanId, PARENT);
    // the step after the C step: the same trace, at level 0 under the parent
    assert.strictEqual(a.traceId, TRACE_ID);
    assert.strictEqual(a.parentSpanId, PARENT);
    // sub-steps, also after a C sub-step: under their frame's span
    assert.strictEqual(i.parentSpanId, a.spanId);
    assert.strictEqual(i2.parentSpanId, a.spanId);
    assert.strictEqual(i2.traceId, TRACE_ID);
    assert.strictEqual(new Set([s.spanId, a.spanId, i.spanId, i2.spanId, c.spanId]).size, 5);
    assert.strictEqual(i.traceparent, `00-${TRACE_ID}-${i.spanId}-01`);
    for (const x of [s, a, i, i2, c]) {
        assert.match(x.spanId, /^[0-9a-f]{16}$/);
    }
    // newInstance(): the same trace under the starting step's span
    assert.strictEqual(c.traceId, TRACE_ID);
    assert.strictEqual(seen.childRoot.parentSpanId, null);
    assert.strictEqual(c.parentSpanId, seen.childRoot.spanId);
    // the root's own handle, after the execution: the span the flow continues
    assert.strictEqual(root.trace().spanId, PARENT);
    assert.strictEqual(root.trace().parentSpanId, null);
});

test('set on a root before execute(), kept after it, cleared, in parallel branches', (t) => {
    fresh(t);
    const seen = {};
    const root = $as();
    root.setTrace(TP);
    assert.deepStrictEqual(root.trace(), {
        traceId: TRACE_ID, spanId: PARENT, parentSpanId: null, flags: 1, traceparent: TP });
    root.add((as) => {
        seen.holder = as.trace();
        const p = as.parallel();
        p.add((as) => {
            seen.b1 = as.trace();
        });
        p.add((as) => {
            seen.b2 = as.trace();
        });
    }).add((as) => {
        as.setTrace(null);
        seen.cleared = as.trace();
    });
    root.execute();
    T.run();
    assert.strictEqual(seen.holder.parentSpanId, PARENT);
    assert.strictEqual(seen.b1.parentSpanId, seen.holder.spanId);
    assert.strictEqual(seen.b2.parentSpanId, seen.holder.spanId);
    assert.notStrictEqual(seen.b1.spanId, seen.b2.spanId);
    assert.strictEqual(seen.cleared, null);
    assert.strictEqual(root.trace(), null);
    // a root's newInstance() continues its context
    const r2 = $as();
    r2.setTrace(TP);
    assert.strictEqual(r2.newInstance().trace().traceparent, TP);
    assert.strictEqual($as().newInstance().trace(), null);
});

test('a bad value is refused with the reason and leaves the context', (t) => {
    fresh(t);
    const bad = [
        '', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7',
        '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
        '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
        'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        TP + '\0', // a NUL would end the C string: never cut to a valid value
        TP + 'x'.repeat(300),
    ];
    const root = $as();
    root.setTrace(TP);
    for (const b of bad) {
        assert.throws(() => root.setTrace(b), (e) => e instanceof TypeError && /traceparent/.test(e.message),
                      JSON.stringify(b));
        assert.strictEqual(root.trace().traceparent, TP);
    }
    assert.throws(() => root.setTrace(42), TypeError);
    // in a step too, and the flow's context stays
    const seen = [];
    root.add((as) => {
        assert.throws(() => as.setTrace('00-zz'), /setTrace\("00-zz"\): /);
        seen.push(as.trace().traceId);
    });
    root.execute();
    T.run();
    assert.deepStrictEqual(seen, [TRACE_ID]);
    // a handle whose callback returned is over
    let kept = null;
    $as().add((as) => {
        kept = as;
    }).execute();
    T.run();
    assert.throws(() => kept.trace(), /InternalError/);
    assert.throws(() => kept.setTrace(TP), /InternalError/);
});
