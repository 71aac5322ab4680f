'use strict';
// The cross-language rules (top-level README.md, "Cross-language rules: one
// behaviour in every binding"), each held by the test its Node cell names.
// Timers run on virtual time (AsyncToolTest): no wall-clock deadline.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const $as = require('../lib');

const T = $as.AsyncToolTest;
const { FutoInError } = $as.Errors;
const vas = () => new $as.AsyncSteps(null, T);

function liveSteps() {
    return require('../lib/native').toolStats(T._native()).liveSteps;
}

// What a call returned or threw, as data.
function outcome(f) {
    try {
        return { returned: f() };
    } catch (e) {
        return { threw: e };
    }
}

// ---- FTN12 §1.3 ----------------------------------------------------------------

test('§1.3: setCancel() alone makes the step wait; a success() from an event completes it', () => {
    const seen = [];
    const as = vas();
    as.add((as) => {
        as.setCancel(() => seen.push('cancelled'));
        T.callLater(() => as.success('data'), 10);
    }).add((as, v) => seen.push(['next', v, T.now() - t0]));
    const t0 = T.now();
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, [['next', 'data', 10]]);
});

test('§1.3: setTimeout() alone makes the step wait; an error() from an event completes it', () => {
    const seen = [];
    const as = vas();
    as.add((as) => {
        as.setTimeout(1000);
        T.callLater(() => {
            try {
                as.error('ReadError');
            } catch (e) {
                seen.push(['threw', e.message]);
            }
        }, 10);
    }, (as, err) => seen.push(['handler', err, T.now() - t0]));
    as.add((_as) => seen.push('next'));
    const t0 = T.now();
    as.execute();
    T.run();
    // error() throws at once; the handler runs when the loop regains
    // control (FTN12 §2.2.2: "after returning to execution engine")
    assert.deepStrictEqual(seen, [['threw', 'ReadError'], ['handler', 'ReadError', 10]]);
});

// ---- a step's return value ----------------------------------------------------------

test('a step\'s return value is not its result (futoin-asyncsteps): the next step gets no values', () => {
    let got;
    const as = vas();
    as.add((as) => 'returned').add((as, ...args) => {
        got = args;
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(got, []);
});

// ---- errors ---------------------------------------------------------------------------

test('error() in step code reports, then throws; a try/catch that swallows it cannot undo the report', () => {
    const seen = [];
    const as = vas();
    as.add((as) => {
        try {
            as.error('Reported', 'the info');
        } catch (e) {
            seen.push(['caught', e instanceof FutoInError, e.message]);
        }
        // the first error wins (the core: not taken, no misuse)
        seen.push(['success() then', as.success('after all')]);
        // returning normally does not make it a success
    }, (as, err) => {
        seen.push(['handler', err, as.state.error_info]);
    }).add((_as) => seen.push('next'));
    as.execute((code) => seen.push(['unhandled', code]));
    T.run();
    assert.deepStrictEqual(seen, [
        ['caught', true, 'Reported'],
        ['success() then', false],
        ['handler', 'Reported', 'the info'],
        ['unhandled', 'Reported'],
    ]);
});

test('any other exception fails the step with its message as the code (futoin-asyncsteps), the exception as last_exception', () => {
    const seen = [];
    const boom = new RangeError('OutOfRange');
    const as = vas();
    as.add((_as) => {
        throw boom;
    }, (as, err) => {
        seen.push([err, as.state.last_exception === boom]);
        as.success();
    }).add((_as) => {
        throw 'AStringCode'; // eslint-disable-line no-throw-literal
    }, (as, err) => {
        seen.push([err, as.state.last_exception]);
        as.success();
    }).add((_as) => {
        throw 42; // eslint-disable-line no-throw-literal
    }, (as, err) => {
        seen.push([err, as.state.last_exception]);
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, [
        ['OutOfRange', true],
        ['AStringCode', 'AStringCode'],
        ['InternalError', 42],
    ]);
});

test('an exception whose message is no error code (empty, a NUL in it) fails the step with InternalError', () => {
    const seen = [];
    const as = vas();
    as.add((_as) => {
        throw new Error('');
    }, (as, err) => {
        seen.push(err);
        as.success();
    }).add((_as) => {
        throw new Error('Bad\0Code');
    }, (as, err) => {
        seen.push(err, as.state.last_exception.message);
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, ['InternalError', 'InternalError', 'Bad\0Code']);
});

// ---- a root: running it, its values, cancel() -------------------------------------------

test('execute(unhandled_error) hears an unhandled error\'s code; a flow runs on its tool\'s loop (no run() of a root)', () => {
    const seen = [];
    const as = vas();
    as.add((as) => as.error('MyError', 'my info')).add((_as) => seen.push('never'));
    assert.strictEqual(as.execute((code) => seen.push(code)), as);
    assert.deepStrictEqual(seen, []); // nothing ran inside execute()
    T.run();
    assert.deepStrictEqual(seen, ['MyError']);
    assert.strictEqual(as.state.error_info, 'my info');
    assert.strictEqual(as.state.last_exception.message, 'MyError');
});

test('promise(): a root\'s values without run(): the last success\'s first value, the error, or Cancelled', async () => {
    const ok = vas().add((as) => as.success('v', 'w')).promise();
    const bad = vas().add((as) => as.error('Nope')).promise();
    const cancelled = vas().add((as) => as.waitExternal());
    const c = cancelled.promise();
    T.run();
    cancelled.cancel();
    T.run();
    assert.strictEqual(await ok, 'v');
    await assert.rejects(bad, (e) => e instanceof FutoInError && e.code === 'Nope');
    await assert.rejects(c, (e) => e instanceof FutoInError && e.code === 'Cancelled');
});

test('cancel() of a root runs the cancel handlers innermost first and returns the root (chainable, as in futoin-asyncsteps)', () => {
    const seen = [];
    const as = vas();
    as.add((as) => {
        as.setCancel(() => seen.push('outer'));
        as.add((as) => as.setCancel(() => seen.push('inner')));
    }).add((_as) => seen.push('never'));
    as.execute();
    T.run();
    assert.strictEqual(as.cancel(), as);
    T.run();
    assert.strictEqual(as.cancel(), as); // no longer executing: nothing to do
    assert.deepStrictEqual(seen, ['inner', 'outer']);
    assert.strictEqual(liveSteps(), 0);
});

// ---- completions from outside ----------------------------------------------------------

test('a late completion (lost to the step\'s timeout or its flow\'s cancel) returns false and never throws', () => {
    let timedOut;
    let cancelled;
    const seen = [];
    const a = vas();
    a.add((as) => {
        timedOut = as;
        as.setTimeout(10);
    }, (as, err) => seen.push(err));
    a.execute();
    const b = vas();
    b.add((as) => {
        cancelled = as;
        as.waitExternal();
    });
    b.execute();
    T.run();
    b.cancel();
    T.run();
    assert.deepStrictEqual(seen, ['Timeout']);
    assert.deepStrictEqual(outcome(() => timedOut.success('late')), { returned: false });
    assert.deepStrictEqual(outcome(() => timedOut.error('Late', 'late info')), { returned: false });
    assert.deepStrictEqual(outcome(() => cancelled.success()), { returned: false });
    assert.deepStrictEqual(outcome(() => cancelled.error('Late')), { returned: false });
    assert.strictEqual(a.state.error_info, undefined);
    T.run();
    assert.deepStrictEqual(seen, ['Timeout']);
});

test('a second completion, or completing a step that did not wait, throws InternalError and has no effect', () => {
    const seen = [];
    let done;
    let noWait;
    const as = vas();
    as.add((as) => {
        noWait = as;
    }).add((as) => {
        as.waitExternal();
        T.callLater(() => {
            seen.push(as.success('first'));
            done = as;
        }, 5);
    }).add((as, v) => {
        seen.push(['next', v]);
        as.waitExternal();
        T.callLater(() => as.success(), 5);
    });
    as.execute((code) => seen.push(['unhandled', code]));
    T.run();
    const second = outcome(() => done.success('second'));
    const secondError = outcome(() => done.error('Second'));
    const notWaiting = outcome(() => noWait.success());
    for (const o of [second, secondError, notWaiting]) {
        assert.ok(o.threw instanceof FutoInError, String(o.returned));
        assert.strictEqual(o.threw.code, 'InternalError');
    }
    T.run();
    assert.deepStrictEqual(seen, [true, ['next', 'first']]);
    assert.strictEqual(as.state.error_info, undefined);
    assert.strictEqual(as.state.last_exception, undefined);
});

test('a second success() inside the step throws InternalError there; the core raises InternalError at the parent\'s handler', () => {
    const seen = [];
    const as = vas();
    as.add((as) => {
        as.add((as) => {
            as.success(1);
            const o = outcome(() => as.success(2));
            seen.push(['second', o.threw && o.threw.code]);
        });
    }, (as, err) => seen.push(['parent handler', err, as.state.error_info]));
    as.execute((code) => seen.push(['unhandled', code]));
    T.run();
    assert.deepStrictEqual(seen, [
        ['second', 'InternalError'],
        ['parent handler', 'InternalError', 'success() after success()'],
        ['unhandled', 'InternalError'],
    ]);
});

// ---- error codes and strings -------------------------------------------------------------

test('error codes: any non-empty code without NUL, of any length, reaches handlers unchanged and is caught by name', () => {
    const codes = ['MyError', 'Ünïcødé ✓', 'x'.repeat(5000), $as.Errors.NotImplemented];
    const seen = [];
    const as = vas();
    for (const code of codes) {
        as.add((as) => as.error(code), (as, err) => {
            seen.push(err === code && as.state.last_exception.code === code);
            as.success();
        });
    }
    as.add((as) => {
        try {
            as.error('ByName');
        } catch (e) {
            seen.push(e instanceof FutoInError && e.code === 'ByName' && e.message === 'ByName');
            throw e;
        }
    }, (as, err) => seen.push(err));
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, [true, true, true, true, true, 'ByName']);
    assert.strictEqual($as.Errors.Timeout, 'Timeout');
});

test('strings with an embedded NUL are refused: a TypeError naming the argument (error codes, loop labels); so is an empty code', () => {
    const seen = [];
    const refused = (f) => {
        const o = outcome(f);
        seen.push(o.threw instanceof TypeError ? o.threw.message : o);
    };
    const as = vas();
    as.add((as) => {
        refused(() => as.error('A\0B'));
        refused(() => as.error(''));
        refused(() => as.loop((_as) => {}, 'L\0M'));
        refused(() => as.repeat(1, (_as) => {}, 'L\0M'));
        refused(() => as.forEach([1], (_as) => {}, 'L\0M'));
        refused(() => vas().loop((_as) => {}, 'L\0M')); // on a root, before execute()
        as.loop((as) => {
            refused(() => as.break('L\0M'));
            refused(() => as.continue('L\0M'));
            as.break('L');
        }, 'L');
    }, (as, err) => seen.push(['handler', err]));
    as.add((_as) => seen.push('after'));
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, [
        'error(): code must be a non-empty string without NUL',
        'error(): code must be a non-empty string without NUL',
        'loop(): label must be a string without NUL',
        'repeat(): label must be a string without NUL',
        'forEach(): label must be a string without NUL',
        'loop(): label must be a string without NUL',
        'break(): label must be a string without NUL',
        'continue(): label must be a string without NUL',
        'after',
    ]);
});

// ---- the state -------------------------------------------------------------------------------

test('the state view of the last error: set where it is raised, undefined again once a break() reaches its loop', () => {
    const seen = [];
    const view = (as) => [as.state.error_info,
        as.state.last_exception && as.state.last_exception.message,
        Array.isArray(as.state.async_stack)];
    const as = vas();
    as.add((as) => as.loop((as) => {
        as.add((as) => as.error('Oops', 'the info'), (as, code) => {
            seen.push(['handler', code, ...view(as)]);
            as.break();
        });
    })).add((as) => seen.push(['after the loop', ...view(as)]));
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, [
        ['handler', 'Oops', 'the info', 'Oops', true],
        ['after the loop', undefined, undefined, false],
    ]);
    assert.strictEqual(as.state, as.state()); // callable, as futoin-asyncsteps'
});

test('the state view of an error the core raises (a Timeout): no info, the code\'s error, not the last handled one\'s', () => {
    const seen = [];
    const view = (as) => [as.state.error_info,
        as.state.last_exception instanceof FutoInError && as.state.last_exception.message];
    const as = vas();
    as.add((as) => as.error('Handled', 'old info'), (as, code) => {
        seen.push([code, ...view(as)]);
        as.success();
    }).add((as) => {
        as.add((as) => as.setTimeout(50), (as, code) => {
            seen.push([code, ...view(as)]);
        });
    }, (as, code) => {
        // the same Timeout unwinding on: the state as the inner handler left it
        seen.push(['outer', code, ...view(as)]);
        as.success();
    });
    as.execute();
    T.run();
    assert.deepStrictEqual(seen, [
        ['Handled', 'old info', 'Handled'],
        ['Timeout', undefined, 'Timeout'],
        ['outer', 'Timeout', undefined, 'Timeout'],
    ]);
});

// ---- one version -------------------------------------------------------------------------------

test('one version: the package\'s and the core\'s are the top meson.build\'s', () => {
    const meson = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'meson.build'), 'utf8');
    const version = /^\s*version:\s*'([^']+)'/m.exec(meson)[1];
    assert.strictEqual(require('../package.json').version, version);
    assert.strictEqual($as.coreVersion, version);
});

// ---- a deliberate difference -------------------------------------------------------------------

test('error() on a root is refused (InternalError) and has no effect, as in the core and every binding', () => {
    const seen = [];
    const as = vas();
    as.add((as) => {
        seen.push('first');
        as.waitExternal();
        T.callLater(() => as.success('done'), 5);
    }, (as, err) => seen.push(['handler', err])).add((as, v) => seen.push(v));
    const idle = outcome(() => as.error('MyError', 'my info'));
    as.execute((code) => seen.push(['unhandled', code]));
    const justExecuted = outcome(() => as.error('MyError', 'my info'));
    T.nextEvent();
    const waiting = outcome(() => as.error('MyError', 'my info'));
    T.run();
    for (const o of [idle, justExecuted, waiting]) {
        assert.ok(o.threw instanceof FutoInError, String(o.returned));
        assert.strictEqual(o.threw.code, 'InternalError');
        assert.strictEqual(o.threw.info, 'error() is for a step\'s own handle, not a root');
    }
    assert.deepStrictEqual(seen, ['first', 'done']);
    assert.strictEqual(as.state.error_info, undefined);
    assert.strictEqual(as.state.last_exception, undefined);
});
