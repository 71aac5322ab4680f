'use strict';
// Consecutive JavaScript steps run in one call from the core (ext chain(),
// lib/AsyncSteps.js runSteps): a success() in a step's own callback is kept
// and its values go to the next step as they are. Whatever the chain does,
// the runtime must see every call in the order the step made it. On
// virtual time (AsyncToolTest).
const test = require('node:test');
const assert = require('node:assert');
const $as = require('../lib');

const T = $as.AsyncToolTest;
const vas = () => new $as.AsyncSteps(null, T);
const dispatched = () => $as.AsyncSteps.dispatchCount();

test('a run of JavaScript steps costs a few calls from the core, not one per step', () => {
    const as = vas();
    let v = -1;
    as.add((as) => as.success(0));
    for (let i = 0; i < 500; ++i) {
        as.add((as, x) => as.success(x + 1));
    }
    as.add((as) => {}); // no values: implicit success
    as.add((as, x) => {
        v = x;
    });
    const before = dispatched();
    as.execute();
    T.run();
    assert.strictEqual(v, undefined); // the step before passed nothing on
    // 503 steps; without chain() each is a call from the core
    assert.ok(dispatched() - before < 20, `${dispatched() - before} calls`);
});

test('the values a step passes on reach the next step as they are (same objects)', () => {
    const as = vas();
    const obj = { a: 1 };
    const arr = [1, 2];
    let got;
    as.add((as) => as.success(obj, arr, 'x', 4));
    as.add((as, o, a, s, n) => as.success(o, a, s, n));
    as.add((as, ...vals) => {
        got = vals;
    });
    as.execute();
    T.run();
    assert.strictEqual(got[0], obj);
    assert.strictEqual(got[1], arr);
    assert.deepStrictEqual(got.slice(2), ['x', 4]);
});

// The reference's rule (README "Behaviour"): a success(), error() or add()
// after success() raises InternalError one level up, at the parent's
// handler; the kept success() goes to the runtime first.
for (const [what, after] of [
    ['add()', (as) => as.add((as) => {})],
    ['error()', (as) => as.error('Other')],
    ['a throw', () => {
        throw new Error('Other');
    }],
    ['success()', (as) => as.success(2)],
]) {
    test(`${what} after success() in the same callback is InternalError one level up`, () => {
        const as = vas();
        let code = null;
        let next = false;
        as.add((as) => {
            as.add((as) => {
                as.success(1);
                after(as);
            });
            as.add((as) => {
                next = true;
            });
        }, (as, err) => {
            code = err;
            as.success();
        });
        as.execute();
        T.run();
        assert.strictEqual(code, 'InternalError');
        assert.strictEqual(next, false);
    });
}

test('a step that waits after success() is refused as before; one that only succeeds is chained', () => {
    const as = vas();
    const seen = [];
    as.add((as) => {
        as.success('a');
    });
    as.add((as, v) => {
        seen.push(v);
        as.waitExternal();
        T.callLater(() => as.success('b'), 5);
    });
    as.add((as, v) => {
        seen.push(v);
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, ['a', 'b']);
});
