'use strict';
// A chain step: this binding (futoin-async on libfutoin_async) vs the same
// chain on futoin-asyncsteps 2.5.5 (the reference) vs plain Promises, side
// by side in one process (bench/README.md, "Node.js").
//
//   node bench/node/chain_bench.js [--steps N] [--len L] [--rounds R] [--csv]
//
// Each round runs every implementation once, in turn (interleaved: drift on
// the machine touches each alike); the table gives the median ns per step
// over the rounds and the min-max. N steps in all (default 200,000), on
// roots of L steps each (default 1,000: the reference dequeues its steps
// with Array.shift(), linear in the queue's length, so one root of tens of
// thousands of steps would be quadratic there), one root after the other.
// Chains:
//   value   L steps `(as, v) => as.success(v + 1)` on one root, added and
//           run (the reference: the same; Promises: `v = await step(v)` with
//           an async function returning v + 1)
//   empty   L steps `(as) => {}` (Promises: `await noop()`)
//   repeat  as.repeat(L, (as, i) => {}) (Promises: a for loop of awaits)
// The reference is found where bindings/node/ri-suite.sh installs it
// ($FUTOIN_RI_CACHE, default build/node-ri/node_modules), or by require();
// this binding's addon as lib/native.js finds it ($FUTOIN_ASYNC_NODE_ADDON
// for a release build).
const path = require('path');
const { repo, opt, loadReference, median } = require('./common');

const args = process.argv.slice(2);
const TOTAL = opt('--steps', 200000);
const N = Math.min(TOTAL, opt('--len', 1000));
const ROOTS = Math.ceil(TOTAL / N);
const ROUNDS = opt('--rounds', 9);
const CSV = args.includes('--csv');

const $as = require(path.join(repo, 'bindings', 'node', 'lib', 'index.js'));
const ref = loadReference();

// ---- the chains: each returns a promise of [ns per step, check value] ----

function timed(run) {
    return async() => {
        let v;
        const t0 = process.hrtime.bigint();
        for (let r = 0; r < ROOTS; ++r) {
            v = await run();
            if (v !== N) {
                break;
            }
        }
        const t1 = process.hrtime.bigint();
        return [Number(t1 - t0) / (N * ROOTS), v];
    };
}

function asChain(make) {
    return {
        value: timed(() => new Promise((resolve, reject) => {
            const root = make();
            root.add((as) => as.success(0));
            for (let i = 0; i < N; ++i) {
                root.add((as, v) => as.success(v + 1));
            }
            root.add((as, v) => resolve(v));
            root.execute((err) => reject(new Error(err)));
        })),
        empty: timed(() => new Promise((resolve, reject) => {
            const root = make();
            for (let i = 0; i < N; ++i) {
                root.add((as) => {});
            }
            root.add((as) => resolve(N));
            root.execute((err) => reject(new Error(err)));
        })),
        repeat: timed(() => new Promise((resolve, reject) => {
            const root = make();
            let n = 0;
            root.add((as) => as.repeat(N, (as, i) => {
                ++n;
            }));
            root.add((as) => resolve(n));
            root.execute((err) => reject(new Error(err)));
        })),
    };
}

const step = async(v) => v + 1;
const noop = async() => {};
const promises = {
    value: timed(async() => {
        let v = 0;
        for (let i = 0; i < N; ++i) {
            v = await step(v);
        }
        return v;
    }),
    empty: timed(async() => {
        for (let i = 0; i < N; ++i) {
            await noop();
        }
        return N;
    }),
    repeat: timed(async() => {
        let n = 0;
        for (let i = 0; i < N; ++i) {
            await noop();
            ++n;
        }
        return n;
    }),
};

const impls = [['futoin-async', asChain(() => $as())]];
if (ref) {
    impls.push(['futoin-asyncsteps 2.5.5', asChain(() => ref())]);
}
impls.push(['Promises', promises]);

async function main() {
    const chains = ['value', 'empty', 'repeat'];
    const res = {};
    // one warm-up round, not counted
    for (const [name, c] of impls) {
        for (const ch of chains) {
            await c[ch]();
        }
    }
    for (let r = 0; r < ROUNDS; ++r) {
        for (const ch of chains) {
            for (const [name, c] of impls) {
                const [ns, v] = await c[ch]();
                if (v !== N) {
                    throw new Error(`${name} ${ch}: got ${v}, expected ${N}`);
                }
                ((res[ch] = res[ch] || {})[name] = res[ch][name] || []).push(ns);
            }
        }
    }
    console.log(`node ${process.version}, ${N * ROOTS} steps (${ROOTS} roots of ${N}), ` +
        `median of ${ROUNDS} interleaved rounds` +
        (ref ? '' : ' (futoin-asyncsteps not found: run bindings/node/ri-suite.sh once)'));
    if (CSV) {
        console.log('chain,impl,median_ns,min_ns,max_ns');
    } else {
        console.log('| chain | implementation | ns/step (median) | min–max | vs futoin-async |');
        console.log('|---|---|---:|---|---:|');
    }
    for (const ch of chains) {
        const ours = median(res[ch]['futoin-async']);
        for (const [name] of impls) {
            const a = res[ch][name];
            const m = median(a);
            const lo = Math.min(...a);
            const hi = Math.max(...a);
            if (CSV) {
                console.log(`${ch},${name},${m.toFixed(1)},${lo.toFixed(1)},${hi.toFixed(1)}`);
            } else {
                const ratio = name === 'futoin-async' ? '1' : `${(m / ours).toFixed(2)}×`;
                console.log(`| ${ch} | ${name} | ${m.toFixed(1)} | ${lo.toFixed(1)}–${hi.toFixed(1)} | ${ratio} |`);
            }
        }
    }
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
