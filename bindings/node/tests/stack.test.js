'use strict';
// The async stack of an error in flows of fresh closures (issue 22, step 4,
// branch nerr): where a JavaScript step was written costs inspector round
// trips (lib/polyglot.js), so it is asked only when a recorded stack is
// read, never while an error unwinds; read, every JavaScript frame names
// its function, file and line. Counts, not times.
const test = require('node:test');
const assert = require('node:assert');
const $as = require('../lib');
const polyglot = require('../lib/polyglot');

function lineHere() {
    const o = {};
    Error.captureStackTrace(o, lineHere);
    return Number(/:(\d+):\d+\)?$/m.exec(o.stack.split('\n')[1])[1]);
}

function settle() {
    return new Promise((r) => setImmediate(() => setImmediate(r)));
}

test('handled errors in steps of fresh closures make no inspector call', async() => {
    const N = 50;
    const calls0 = polyglot.inspectorCalls();
    let handled = 0;
    const as = $as();
    const p = as.parallel();
    for (let i = 0; i < N; ++i) {
        p.add((as) => {
            as.add((as) => as.error('X'), (as, err) => {
                if (err === 'X') {
                    ++handled;
                }
                as.success();
            });
        });
    }
    await as.promise();
    assert.equal(handled, N);
    assert.equal(polyglot.inspectorCalls(), calls0);
});

test('stacks nobody read give back the functions they held', async() => {
    await settle();
    const refs0 = $as.liveRefs();
    const roots = [];
    for (let i = 0; i < 20; ++i) {
        const as = $as();
        as.add((as) => {
            as.add((as) => as.error('X'), (as, err) => as.success());
        });
        roots.push(as.promise());
    }
    await Promise.all(roots);
    await settle();
    assert.equal($as.liveRefs(), refs0);
});

test('a stack read in the handler names each JavaScript frame where it was written', async() => {
    let frames = null;
    let again = null;
    let callsBetween = -1;
    let outerLine = 0;
    let innerLine = 0;
    const as = $as();
    outerLine = lineHere() + 1;
    as.add(function outerStep(as) {
        innerLine = lineHere() + 1;
        as.add((as) => as.error('X'), (as, err) => {
            frames = as.asyncStack();
            const calls = polyglot.inspectorCalls();
            again = as.asyncStack();
            callsBetween = polyglot.inspectorCalls() - calls;
            as.success();
        });
    });
    await as.promise();
    assert.ok(Array.isArray(frames));
    assert.equal(frames.length, 2);
    for (const f of frames) {
        assert.equal(f.language, 'javascript');
        assert.equal(f.file, __filename);
    }
    assert.equal(frames[0].function, '<anonymous>');
    assert.equal(frames[0].line, innerLine);
    assert.equal(frames[1].function, 'outerStep');
    assert.equal(frames[1].line, outerLine);
    // read again: the same frames, no new lookup
    assert.deepEqual(again, frames);
    assert.equal(callsBetween, 0);
});

test('an unhandled error prints the frames with their file:line', async() => {
    const as = $as();
    const line = lineHere() + 1;
    as.add(function failingStep(as) {
        as.error('Y');
    });
    const e = await as.promise().then(() => null, (e) => e);
    assert.ok(e instanceof Error);
    assert.equal(e.asyncStack[0].function, 'failingStep');
    assert.equal(e.asyncStack[0].line, line);
    assert.ok(e.stack.includes(`failingStep (${__filename}:${line})`), e.stack);
});
