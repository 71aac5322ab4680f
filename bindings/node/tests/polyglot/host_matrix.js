'use strict';
// The polyglot matrix with Node.js as the host program
// (tests/polyglot/README.md): flows whose own steps are JavaScript, with
// steps of another language F (its "polyglot_fragments", added by name with
// as.addForeign) in between. Per F: values both ways, an error of F caught
// in JavaScript and an error of JavaScript caught in F, cancel, timeout,
// shared state, the async stack; then mixed flows after which the binding
// holds no more references than before.
//
// Run by bindings/node/polyglot.sh test (node --test, the environment of
// tests/polyglot/run.sh). FUTOIN_POLYGLOT_LANGS picks the languages F
// (default "c python lua java javascript"; "javascript" is JavaScript itself
// by name, through the host "javascript" this process registered).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');

const $as = require('../../lib/index');

const LANGS = (process.env.FUTOIN_POLYGLOT_LANGS || 'c python lua java javascript')
    .split(/[\s,]+/).filter(Boolean);
const CFRAG = process.env.FUTOIN_POLYGLOT_C_FRAGMENTS;
const FLOWS = Number(process.env.FUTOIN_POLYGLOT_FLOWS || '') || 10000;
const THIS_FILE = __filename;

function moduleOf(lang) {
    if (lang === 'java') {
        return 'org.futoin.polyglot.Fragments';
    }
    if (lang === 'c') {
        assert.ok(CFRAG, 'FUTOIN_POLYGLOT_C_FRAGMENTS is not set');
        return CFRAG;
    }
    return 'polyglot_fragments';
}

// Run a root to its end: {ok, values} or {ok: false, code, error}; a
// cancelled root: {ok: false, code: 'Cancelled'}.
function run(root) {
    let values;
    root.add((as, ...v) => {
        values = v;
    });
    return root.promise().then(
        () => ({ ok: true, values }),
        (error) => ({ ok: false, code: error.message, error }));
}

function lineHere() {
    const o = {};
    Error.captureStackTrace(o, lineHere);
    return Number(/:(\d+):\d+\)?$/m.exec(o.stack.split('\n')[1])[1]);
}

test('the Node.js host registered the language host "javascript" (steps of JavaScript by name)', async() => {
    const root = $as();
    root.add((as) => as.success(6, 7));
    root.addForeign('javascript', 'polyglot_fragments', 'describe');
    assert.deepEqual(await run(root), { ok: true, values: ['int:6,int:7'] });
});

test('says clearly what cannot be had, in the flow as InvalidRequest', async() => {
    const cases = [
        ['cobol', 'payroll', 'run', "no host for language 'cobol'"],
        ['javascript', 'no_such_module_xyz', 'f',
            "javascript: cannot load module 'no_such_module_xyz' (for function 'f')"],
        ['javascript', 'polyglot_fragments', 'nosuch',
            "javascript: module 'polyglot_fragments' has no function 'nosuch'"],
        ['javascript', './relative', 'f', "javascript: module './relative' is a relative path"],
        ['c', '/nonexistent/libx.so', 'f', "c: cannot load module '/nonexistent/libx.so'"],
    ];
    for (const [l, m, f, text] of cases) {
        const root = $as();
        let ran = false;
        root.addForeign(l, m, f);
        root.add((as) => {
            ran = true;
        });
        const r = await run(root);
        assert.equal(r.ok, false);
        assert.equal(r.code, 'InvalidRequest');
        assert.ok(root.state.error_info.includes(text), root.state.error_info);
        assert.equal(ran, false);
    }
    assert.throws(() => $as().addForeign('lua', {}, 'f'), /module must be a string, not object/);
    assert.throws(() => $as().addForeign('lua', 'a\0b', 'f'), /must not contain a NUL/);
});

test('keeps objects in the state JavaScript\'s own and shares numbers, strings and booleans', async() => {
    const root = $as();
    const list = [1, 2];
    root.add((as) => {
        as.state.list = list;
        as.state.n = 5;
        as.state.s = 'x';
        as.state.b = false;
    });
    root.addForeign('javascript', 'polyglot_fragments', 'write_state');
    root.add((as) => {
        assert.equal(as.state.list, list); // the same object
        assert.equal(as.state.n, 5);
        assert.equal(as.state.from_javascript, 'javascript');
        delete as.state.n;
        assert.equal(as.state.n, undefined);
    });
    assert.equal((await run(root)).ok, true);
    assert.equal(root.state.s, 'x');
    assert.equal(root.state.from_javascript, 'javascript'); // after the end, too
});

for (const F of LANGS) {
    const MOD = moduleOf(F);

    test(`Node host x ${F}: values, echo round trip and what ${F} saw`, async() => {
        let root = $as();
        root.add((as) => as.success(42, 2.5, true, 'héllo'));
        root.addForeign(F, MOD, 'echo');
        assert.deepEqual(await run(root), { ok: true, values: [42, 2.5, true, 'héllo'] });

        root = $as();
        root.add((as) => as.success(Buffer.from([0, 1, 255]), [1, 2, 3], [0.5, 1.5]));
        root.addForeign(F, MOD, 'echo');
        const r = await run(root);
        assert.equal(r.ok, true, r.code);
        assert.ok(Buffer.isBuffer(r.values[0]), typeof r.values[0]);
        assert.deepEqual([...r.values[0]], [0, 1, 255]);
        assert.deepEqual(r.values.slice(1), [[1, 2, 3], [0.5, 1.5]]);

        root = $as();
        root.add((as) => as.success(42, 2.5, true, 'héllo'));
        root.addForeign(F, MOD, 'describe');
        assert.deepEqual(await run(root), { ok: true, values: ['int:42,float:2.5,bool:true,str:héllo'] });

        root = $as();
        root.add((as) => as.success(Buffer.from([0, 1, 255]), [1, 2, 3], [0.5, 1.5]));
        root.addForeign(F, MOD, 'describe');
        assert.deepEqual(await run(root), { ok: true, values: ['bytes:0001ff,ints:1|2|3,floats:0.5|1.5'] });

        root = $as();
        root.addForeign(F, MOD, 'describe');
        assert.deepEqual(await run(root), { ok: true, values: ['none'] });
    });

    test(`Node host x ${F}: errors, ${F}.fail caught in JavaScript, a JavaScript error caught in ${F}`, async() => {
        let root = $as();
        let code;
        let info;
        root.add((as) => {
            as.addForeign(F, MOD, 'fail');
        }, (as, c) => {
            code = c;
            info = as.state.error_info;
            as.success('recovered');
        });
        assert.deepEqual(await run(root), { ok: true, values: ['recovered'] });
        assert.equal(code, 'FragmentError');
        assert.equal(info, F);

        // F.catch("javascript", "polyglot_fragments", "fail"): JavaScript's
        // error, F's handler
        root = $as();
        root.add((as) => as.success('javascript', 'polyglot_fragments', 'fail'));
        root.addForeign(F, MOD, 'catch');
        assert.deepEqual(await run(root), { ok: true, values: [`caught FragmentError in ${F}`] });

        // an error no handler takes: the promise rejects with it
        root = $as();
        root.addForeign(F, MOD, 'fail');
        const r = await run(root);
        assert.equal(r.ok, false);
        assert.equal(r.code, 'FragmentError');
        assert.equal(root.state.error_info, F);
    });

    test(`Node host x ${F}: the async stack, ${F}'s frame first, then JavaScript's`, async() => {
        let root = $as();
        let frames;
        let stepLine = 0;
        const step = (as) => {
            stepLine = lineHere() - 1;
            as.addForeign(F, MOD, 'fail');
        };
        root.add(step, (as, c) => {
            frames = as.asyncStack();
            as.success();
        });
        assert.equal((await run(root)).ok, true);
        assert.ok(Array.isArray(frames), String(frames));
        assert.equal(frames[0].language, F);
        assert.ok(frames[0].function && frames[0].function.includes('fail'), frames[0].function);
        // the guard of addForeign(): the call, at its line
        assert.equal(frames[1].language, 'javascript');
        assert.equal(frames[1].function, `addForeign(${F}, ${MOD}, fail)`);
        assert.equal(frames[1].file, THIS_FILE);
        assert.equal(frames[1].line, stepLine + 2);
        // the step that called it: its function, where it was written
        assert.equal(frames[2].language, 'javascript');
        assert.equal(frames[2].function, 'step');
        assert.equal(frames[2].file, THIS_FILE);
        assert.equal(frames[2].line, stepLine);

        // and on the error the promise rejects with
        root = $as();
        root.add(function outer(as) {
            as.addForeign(F, MOD, 'fail');
        });
        const r = await run(root);
        assert.equal(r.ok, false);
        assert.equal(r.error.asyncStack[0].language, F);
        assert.match(r.error.stack, new RegExp(`async stack:\\n    at ${F} [^\\n]*fail`));
        assert.ok(r.error.stack.includes(`    at javascript outer (${THIS_FILE}:`), r.error.stack);
    });

    // cancel and timeout on virtual time (AsyncToolTest): run() runs the
    // flow until nothing is left to do but F.wait's waiting; no clock
    test(`Node host x ${F}: cancel, the root cancelled while ${F}.wait waits`, () => {
        const T = $as.AsyncToolTest;
        const root = new $as.AsyncSteps(null, T);
        let after = false;
        let seen;
        let unhandled = null;
        root.add((as) => {
            // a JavaScript cancel handler further out runs after F's
            as.setCancel((as) => {
                seen = as.state[`cancelled_${F}`];
            });
            as.addForeign(F, MOD, 'wait');
        });
        root.add((as) => {
            after = true;
        });
        root.execute((code) => {
            unhandled = code;
        });
        T.run();
        assert.equal(seen, undefined); // waiting
        root.cancel();
        T.run();
        assert.equal(after, false);
        assert.equal(unhandled, null);
        assert.equal(seen, true);
        // read in the flow: a name JavaScript shares, kept after the end
        assert.equal(root.state[`cancelled_${F}`], true);
    });

    test(`Node host x ${F}: timeout, a JavaScript step with a timeout around ${F}.wait`, () => {
        const T = $as.AsyncToolTest;
        const root = new $as.AsyncSteps(null, T);
        let code;
        let flag;
        let done = false;
        const t0 = T.now();
        root.add((as) => {
            as.setTimeout(30000);
            as.addForeign(F, MOD, 'wait');
        }, (as, c) => {
            code = c;
            flag = as.state[`cancelled_${F}`];
            as.success();
        });
        root.add((as) => {
            done = true;
        });
        root.execute();
        T.run();
        assert.equal(done, true);
        assert.equal(code, 'Timeout');
        assert.equal(flag, true);
        assert.equal(T.now() - t0, 30000); // virtual
    });

    test(`Node host x ${F}: state, JavaScript sets key, ${F} reads it; ${F} sets from_${F}, JavaScript reads it`, async() => {
        const root = $as();
        let read;
        let from;
        root.add((as) => {
            as.state.key = 42;
        });
        root.addForeign(F, MOD, 'read_state');
        root.add((as, v) => {
            read = v;
        });
        root.addForeign(F, MOD, 'write_state');
        root.add((as) => {
            from = as.state[`from_${F}`];
        });
        assert.equal((await run(root)).ok, true);
        assert.equal(read, 42);
        assert.equal(from, F);
        assert.equal(root.state[`from_${F}`], F); // and after the flow
    });

    test(`Node host x ${F}: ${FLOWS} mixed flows leave no reference behind`, async() => {
        // the core roots of ended executions are freed when their
        // AsyncSteps are collected (FinalizationRegistry): collect, let the
        // finalizers and the frees they schedule run
        const settle = async() => {
            for (let i = 0; i < 4; ++i) {
                if (global.gc) {
                    global.gc();
                }
                await new Promise((r) => setImmediate(r));
            }
        };
        await settle();
        const refs0 = $as.liveRefs();
        const counts = { ok: 0, err: 0, cancel: 0 };
        for (let i = 0; i < FLOWS; i += 100) {
            const batch = [];
            for (let j = i; j < i + 100 && j < FLOWS; ++j) {
                const root = $as();
                const kind = j % 3;
                if (kind === 0) {
                    root.add((as) => {
                        as.state.key = j;
                        as.success(j, 's', [1, 2]);
                    });
                    root.addForeign(F, MOD, 'echo');
                    root.add((as, v) => {
                        if (v === j) {
                            counts.ok++;
                        }
                    });
                    batch.push(root.promise());
                } else if (kind === 1) {
                    root.add((as) => as.addForeign(F, MOD, 'fail'), (as, c) => {
                        if (c === 'FragmentError') {
                            counts.err++;
                        }
                        as.success();
                    });
                    batch.push(root.promise());
                } else {
                    root.add((as) => as.addForeign(F, MOD, 'wait'));
                    batch.push(root.promise().catch((e) => {
                        if (e.message === 'Cancelled') {
                            counts.cancel++;
                        }
                    }));
                    setImmediate(() => root.cancel());
                }
            }
            await Promise.all(batch);
        }
        await settle();
        const refs = $as.liveRefs();
        console.log(`  Node host x ${F}: ${FLOWS} flows (${counts.ok} ok, ${counts.err} error, ` +
            `${counts.cancel} cancel); references held by the core ${refs0} -> ${refs}`);
        assert.equal(counts.ok, Math.ceil(FLOWS / 3));
        assert.equal(counts.err + counts.ok + counts.cancel, FLOWS);
        assert.equal(refs, refs0);
    });
}
