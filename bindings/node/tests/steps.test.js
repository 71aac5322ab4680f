'use strict';
// The binding's own tests (node:test), on virtual time: AsyncToolTest's
// tool never waits on the wall clock, run() jumps from timer to timer.
const test = require('node:test');
const assert = require('node:assert');
const $as = require('../lib');

const T = $as.AsyncToolTest;
const vas = () => new $as.AsyncSteps(null, T);

function liveSteps() {
    return require('../lib/native').toolStats(T._native()).liveSteps;
}

test('steps run in order and pass their values on', () => {
    const as = vas();
    const seen = [];
    as.add((as) => {
        seen.push(1);
        as.success(1, 'two', { three: 3 });
    }).add((as, a, b, c) => {
        seen.push([a, b, c.three]);
        as.add((as) => as.success('inner'));
    }).add((as, v) => {
        seen.push(v);
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, [1, [1, 'two', 3], 'inner']);
    assert.strictEqual(liveSteps(), 0);
});

test('an error reaches the handler as its code; error() throws an Error with it', () => {
    const as = vas();
    let thrown;
    let got;
    as.add((as) => {
        as.add((as) => {
            try {
                as.error('MyError', 'my info');
            } catch (e) {
                thrown = e;
                throw e;
            }
        });
    }, (as, err) => {
        got = [err, as.state.error_info, as.state.last_exception === thrown];
        as.success('recovered');
    }).add((as, v) => got.push(v));
    as.execute();
    T.run();
    assert.ok(thrown instanceof Error);
    assert.strictEqual(thrown.message, 'MyError');
    assert.deepStrictEqual(got, ['MyError', 'my info', true, 'recovered']);
});

test('a JavaScript exception in a step is the error of its message', () => {
    const as = vas();
    let got;
    as.add((as) => {
        throw new TypeError('bad thing');
    }, (as, err) => {
        got = [err, as.state.last_exception instanceof TypeError];
        as.success();
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(got, ['bad thing', true]);
});

test('a timeout fires on virtual time, with the cancel handler first', () => {
    const as = vas();
    const order = [];
    as.add((as) => {
        as.setTimeout(60000);
        as.setCancel(() => order.push('cancel'));
    }, (as, err) => {
        order.push(err);
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(order, ['cancel', 'Timeout']);
});

test('an external completion: waitExternal, success() from a callLater', () => {
    const as = vas();
    let got;
    as.add((as) => {
        as.waitExternal();
        T.callLater(() => as.success('later'), 5000);
    }).add((as, v) => {
        got = [v, T.now()];
    });
    const t0 = T.now();
    as.execute();
    T.run();
    assert.deepStrictEqual(got, ['later', t0 + 5000]);
});

test('cancel runs the cancel handlers innermost first', () => {
    const as = vas();
    const order = [];
    as.add((as) => {
        as.setCancel(() => order.push('1c'));
        as.add((as) => {
            as.setCancel(() => order.push('2c'));
        });
    });
    as.execute();
    T.run();
    as.cancel();
    T.run();
    assert.deepStrictEqual(order, ['2c', '1c']);
});

test('loop, repeat, forEach, break and continue', () => {
    const as = vas();
    const seen = [];
    as.add((as) => {
        let i = 0;
        as.loop((as) => {
            ++i;
            if (i === 2) {
                as.continue();
            }
            if (i === 4) {
                as.break();
            }
            seen.push(`l${i}`);
        });
        as.repeat(3, (as, n) => seen.push(`r${n}`));
        as.forEach([10, 20], (as, k, v) => seen.push(`a${k}=${v}`));
        as.forEach({ x: 1 }, (as, k, v) => seen.push(`o${k}=${v}`));
        as.forEach(new Map([['m', 2]]), (as, k, v) => seen.push(`m${k}=${v}`));
        as.loop((as) => {
            as.loop((as) => as.break('OUTER'));
        }, 'OUTER');
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, ['l1', 'l3', 'r0', 'r1', 'r2', 'a0=10', 'a1=20', 'ox=1', 'mm=2']);
});

test('parallel branches run, an error cancels the others', () => {
    const as = vas();
    const seen = [];
    as.add((as) => {
        const p = as.parallel((as, err) => {
            seen.push(err);
            as.success();
        });
        p.add((as) => {
            seen.push('a');
            as.setTimeout(1000);
            as.setCancel(() => seen.push('a cancelled'));
        });
        p.add((as) => {
            seen.push('b');
            as.error('BranchError');
        });
    }).add((as) => seen.push('after'));
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, ['a', 'b', 'a cancelled', 'BranchError', 'after']);
});

test('Mutex lets one flow in at a time', () => {
    const mtx = new $as.Mutex();
    const order = [];
    for (let i = 0; i < 3; ++i) {
        const as = vas();
        as.sync(mtx, (as) => {
            order.push(`in${i}`);
            as.waitExternal();
            T.callLater(() => {
                order.push(`out${i}`);
                as.success();
            }, 10);
        });
        as.execute();
    }
    T.run();
    assert.deepStrictEqual(order, ['in0', 'out0', 'in1', 'out1', 'in2', 'out2']);
});

test('Throttle lets max flows in per period, on virtual time', () => {
    const thr = new $as.Throttle(2, 100);
    const at = [];
    for (let i = 0; i < 5; ++i) {
        const as = vas();
        as.sync(thr, (as) => {
            at.push(T.now());
        });
        as.execute();
    }
    const t0 = T.now();
    T.run();
    assert.deepStrictEqual(at.map((t) => t - t0), [0, 0, 100, 100, 200]);
});

test('promise() resolves with the last result, rejects with the error', async () => {
    const ok = $as().add((as) => as.success('v')).promise();
    assert.strictEqual(await ok, 'v');
    const bad = $as().add((as) => as.error('Nope')).promise();
    await assert.rejects(bad, (e) => e instanceof Error && e.message === 'Nope');
});

test('await() takes a promise\'s value, and a rejection as PromiseReject', async () => {
    const got = await $as()
        .await(Promise.resolve(5))
        .add((as, v) => as.success(v * 2))
        .await(Promise.reject(new Error('x')), (as, err) => as.success(err))
        .add((as, e) => as.success(e))
        .promise();
    assert.strictEqual(got, 'PromiseReject');
});

test('misuse is an InternalError: adding to a running root, a bad step function', () => {
    const as = vas();
    assert.throws(() => as.add(() => {}), /InternalError/);
    as.add((as) => as.waitExternal());
    as.execute();
    assert.throws(() => as.add((as) => {}), /InternalError/);
    as.cancel();
    T.run();
});

test('every reference the core held is released: no live steps once flows end', () => {
    for (let i = 0; i < 100; ++i) {
        const as = vas();
        as.add((as) => as.success(i)).add((as, v) => as.error('E'), (as, e) => as.success());
        as.execute();
    }
    T.run();
    assert.strictEqual(liveSteps(), 0);
});
