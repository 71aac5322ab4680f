'use strict';
// tool.setHooks() and tool.dump() (futoin/sys/hooks.h, futoin_tool_dump()):
// the binding passes each event on as one object and the dump as a string;
// the events and their order are the library's (tests/test_hooks.c), as in
// Python's test_watch.py and Java's WatchTest. Virtual time: every time
// is exact.
const test = require('node:test');
const assert = require('node:assert');
const $as = require('../lib');

const T = $as.AsyncToolTest;

function fresh(t) {
    $as.installAsyncToolTest();
    T.resetEvents();
    t.after(() => {
        T.setHooks(null);
        T.resetEvents();
        $as.installAsyncToolTest(false);
    });
}

function recorder(events) {
    return (ev) => {
        const short = [ev.event, `r${ev.rootId}`];
        if (ev.function !== null) {
            short.push(ev.function);
        }
        for (const k of ['code', 'outcome', 'waitKind', 'waitLanguage']) {
            if (ev[k] !== null) {
                short.push(ev[k]);
            }
        }
        events.push(`${short.join(' ')} @${ev.now}`);
    };
}

test('the hook events of a chain, an error and a wait, on virtual time', (t) => {
    fresh(t);
    const events = [];
    T.setHooks(recorder(events));
    $as()
        .add(function first(as) {
            as.error('MyError', 'it broke');
        }, (as, _err) => as.success())
        .add(function wait(as) {
            as.waitExternal();
            T.callLater(() => as.success(), 30);
        })
        .execute();
    T.run();
    const rid = events[0].split(' ')[1];
    // execute() of the binding ends the flow with a C step of its own
    // (t_end_step), reported as any step
    assert.deepStrictEqual(events, [
        `flow_started ${rid} @0`,
        `step_entered ${rid} first @0`,
        `error_raised ${rid} MyError @0`,
        `error_handled ${rid} MyError @0`,
        `step_left ${rid} first @0`,
        `step_entered ${rid} wait @0`,
        `wait_begun ${rid} wait foreign javascript @0`,
        `wait_ended ${rid} wait foreign javascript @30`,
        `step_left ${rid} wait @30`,
        `step_entered ${rid} t_end_step @30`,
        `step_left ${rid} t_end_step @30`,
        `flow_finished ${rid} success @30`]);

    // an event has every field, null / 0 where it has none
    const seen = [];
    T.setHooks((ev) => seen.push(ev));
    $as().add(function failing(as) {
        as.setTimeout(5);
    }).execute();
    T.run();
    const raised = seen.find((e) => e.event === 'error_raised');
    assert.strictEqual(raised.code, 'Timeout');
    const begun = seen.find((e) => e.event === 'wait_begun');
    assert.strictEqual(begun.waitKind, 'timer');
    assert.strictEqual(begun.due, 35);
    assert.strictEqual(begun.language, 'javascript');
    assert.match(begun.file, /watch\.test\.js$/);
    assert.ok(begun.line > 0);
    const fin = seen[seen.length - 1];
    assert.strictEqual(fin.event, 'flow_finished');
    assert.strictEqual(fin.outcome, 'error');
    assert.strictEqual(fin.code, 'Timeout');
    assert.strictEqual(fin.function, null);

    // cleared: nothing more is reported
    T.setHooks(null);
    const n = events.length + seen.length;
    $as().add((as) => as.success()).execute();
    T.run();
    assert.strictEqual(events.length + seen.length, n);
});

test('hooks: replaced from inside a hook, a throwing listener, bad arguments', (t) => {
    fresh(t);
    const a = [];
    const b = [];
    T.setHooks((ev) => {
        a.push(ev.event);
        if (ev.event === 'step_entered') {
            T.setHooks((ev2) => b.push(ev2.event)); // serves from the next event
        }
    });
    $as().add((as) => as.success()).execute();
    T.run();
    assert.deepStrictEqual(a, ['flow_started', 'step_entered']);
    assert.strictEqual(b[0], 'step_left');
    T.setHooks(() => {
        throw new Error('listener broke');
    });
    $as().add((as) => as.success()).execute();
    assert.throws(() => T.run(), /listener broke/);
    T.setHooks(null);
    assert.throws(() => T.setHooks(42), TypeError);
    // the listener survives resetEvents() (a new core tool)
    const c = [];
    T.setHooks((ev) => c.push(ev.event));
    T.resetEvents();
    $as().add((as) => as.success()).execute();
    T.run();
    assert.strictEqual(c[0], 'flow_started');
});

test('the dump names each waiting flow\'s reason and origin', (t) => {
    fresh(t);
    const mtx = new $as.Mutex(1);
    const r1 = $as().add(function sleepy(as) {
        as.setTimeout(5000);
    });
    const r2 = $as().add(function waitExt(as) {
        as.waitExternal();
    });
    const r3 = $as().sync(mtx, function guarded(as) {
        as.waitExternal();
    });
    const r4 = $as().sync(mtx, function guarded(as) {
        as.waitExternal();
    });
    // (advance() runs what is due; run() would jump to the 5 s timer)
    for (const r of [r1, r2, r3]) {
        r.execute();
    }
    T.advance(400);
    r4.execute();
    T.advance(600);
    const d = T.dump();
    assert.ok(d.startsWith('futoin-dump version=1 now=1000 roots=4\n'), d);
    assert.ok(d.endsWith('end roots=4\n'), d);
    const ids = [...d.matchAll(/^root=(\d+) state=running/gm)].map((m) => +m[1]).sort((x, y) => x - y);
    assert.strictEqual(ids.length, 4, d);
    const [a, b, c, e] = ids;
    // on a timer
    assert.match(d, new RegExp(`^root=${a} flow=0 wait=timer since=0 waited=1000 due=5000\\n`
        + `root=${a} flow=0 at=0 javascript sleepy \\(\\S*watch\\.test\\.js:\\d+\\)$`, 'm'));
    // on an external completion: a JavaScript step, which JavaScript completes
    assert.match(d, new RegExp(`^root=${b} flow=0 wait=foreign since=0 waited=1000 `
        + `language=javascript\\nroot=${b} flow=0 at=0 javascript waitExt `, 'm'));
    // the Mutex's holder waits in its section ...
    assert.match(d, new RegExp(`^root=${c} flow=0 wait=foreign since=0 waited=1000 `
        + `language=javascript\\nroot=${c} flow=0 at=0 javascript guarded `, 'm'));
    // ... and the other flow is first in its queue, since 400
    assert.match(d, new RegExp(`^root=${e} flow=0 wait=sync since=400 waited=600 `
        + `object=Mutex place=1 queued=1\\nroot=${e} flow=0 section=javascript guarded `, 'm'));
    // a cancelled root is no longer listed
    r2.cancel();
    T.advance(0);
    const d2 = T.dump();
    assert.ok(d2.startsWith('futoin-dump version=1 now=1000 roots=3\n'), d2);
    assert.doesNotMatch(d2, new RegExp(`^root=${b} `, 'm'));
    for (const r of [r1, r3, r4]) {
        r.cancel();
    }
    T.advance(0);
    assert.strictEqual(T.dump(), 'futoin-dump version=1 now=1000 roots=0\nend roots=0\n');
});
