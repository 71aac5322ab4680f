'use strict';
// Handled errors: this binding (futoin-async on libfutoin_async) vs
// futoin-asyncsteps 2.5.5 (the reference), side by side in one process
// (bench/README.md, "Node.js"; issue 22 step 4, branch nerr).
//
//   node bench/node/errs_bench.js [--errors N] [--rounds R] [--csv]
//
// One flow of N parallel branches (default 2,000), each a step that adds a
// step raising error 'X' with a handler that recovers (as.success()):
//   fresh   every branch and every failing step a new closure, as idiomatic
//           code writes it (`p.add((as) => {...})` in a loop): each error
//           records an async stack of functions never seen before
//   shared  the failing step one function for all branches
// Each round runs every implementation and shape once, in turn
// (interleaved: drift on the machine touches each alike); the table gives
// the median ms per flow over the rounds and the min-max. The last
// column of ours: inspector calls made while the errors unwound (where a
// JavaScript frame was written is asked only when a stack is read).
// The reference is found where bindings/node/ri-suite.sh installs it
// ($FUTOIN_RI_CACHE, default build/node-ri/node_modules), or by require();
// this binding's addon as lib/native.js finds it ($FUTOIN_ASYNC_NODE_ADDON
// for another build). FUTOIN_BENCH_LIB: another checkout's lib/ (a base
// for a side-by-side run of two trees, one process each).
const path = require('path');
const { repo, opt, loadReference, median } = require('./common');

const N = opt('--errors', 2000);
const ROUNDS = opt('--rounds', 7);
const CSV = process.argv.slice(2).includes('--csv');

const lib = process.env.FUTOIN_BENCH_LIB || path.join(repo, 'bindings', 'node', 'lib');
const $as = require(path.join(lib, 'index.js'));
let polyglot = null;
try {
    polyglot = require(path.join(lib, 'polyglot.js'));
} catch (_) {
    // no polyglot layer
}
const ref = loadReference();

// one flow of N handled errors; resolves with ms
function run(make, fresh) {
    return new Promise((resolve, reject) => {
        const t0 = process.hrtime.bigint();
        const as = make();
        const shared = (as) => as.error('X');
        let handled = 0;
        const p = as.parallel();
        for (let i = 0; i < N; ++i) {
            p.add((as) => {
                as.add(fresh ? ((as) => as.error('X')) : shared, (as, err) => {
                    ++handled;
                    as.success();
                });
            });
        }
        as.add((as) => {
            const ms = Number(process.hrtime.bigint() - t0) / 1e6;
            if (handled !== N) {
                reject(new Error(`${handled} of ${N} errors handled`));
            } else {
                resolve(ms);
            }
        });
        as.execute();
    });
}

async function main() {
    const impls = [['futoin-async', $as]];
    if (ref) {
        impls.push(['reference 2.5.5', ref]);
    } else {
        console.error('errs_bench: futoin-asyncsteps not found (bash bindings/node/ri-suite.sh installs it)');
    }
    const shapes = ['fresh', 'shared'];
    const ms = {};
    // warm-up: one small flow of each (the first error of a process)
    for (const [name, make] of impls) {
        for (const sh of shapes) {
            ms[`${name}/${sh}`] = [];
            await run(make, sh === 'fresh');
        }
    }
    const calls0 = polyglot && polyglot.inspectorCalls ? polyglot.inspectorCalls() : NaN;
    for (let r = 0; r < ROUNDS; ++r) {
        for (const [name, make] of impls) {
            for (const sh of shapes) {
                ms[`${name}/${sh}`].push(await run(make, sh === 'fresh'));
            }
        }
    }
    const calls = polyglot && polyglot.inspectorCalls ? polyglot.inspectorCalls() - calls0 : NaN;
    if (CSV) {
        console.log('impl,shape,median_ms,min_ms,max_ms');
    } else {
        console.log(`handled errors: ${N} parallel branches per flow, ${ROUNDS} rounds (median ms per flow, min-max)`);
    }
    for (const [name] of impls) {
        for (const sh of shapes) {
            const a = ms[`${name}/${sh}`];
            const row = [median(a), Math.min(...a), Math.max(...a)].map((x) => x.toFixed(1));
            if (CSV) {
                console.log([name, sh, ...row].join(','));
            } else {
                console.log(`  ${name.padEnd(16)} ${sh.padEnd(7)} ${row[0].padStart(8)} ms  (${row[1]}-${row[2]})`);
            }
        }
    }
    if (!CSV) {
        console.log(`  inspector calls of futoin-async over the rounds: ${Number.isNaN(calls) ? 'n/a' : calls}`);
    }
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
