'use strict';
// The tool on Node's own loop keeps the process alive exactly while flows
// have work: a process whose flows end exits by itself, with the flow's
// work done; a Worker thread has a tool of its own.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const lib = JSON.stringify(path.join(__dirname, '..', 'lib'));

function runNode(code) {
    return spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
}

test('a process whose flows end exits by itself, after their timers', () => {
    const r = runNode(`
        const $as = require(${lib});
        $as().add((as) => {
            as.waitExternal();
            $as.AsyncTool.callLater(() => as.success('late'), 30);
        }).add((as, v) => {
            as.setTimeout(60000); // a guard against a hang, not a race
            setTimeout(() => as.success(), 20);
        }).add((as) => console.log('done')).execute();`);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout, 'done\n');
});

test('a flow waiting on a cancelled step does not keep the process', () => {
    const r = runNode(`
        const $as = require(${lib});
        const as = $as();
        as.add((as) => { as.setCancel(() => console.log('cancelled')); });
        as.execute();
        setTimeout(() => as.cancel(), 10);`);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout, 'cancelled\n');
});

test('a Worker thread runs flows on a tool of its own', () => {
    const r = runNode(`
        const { Worker, isMainThread, parentPort } = require('node:worker_threads');
        const $as = require(${lib});
        const w = new Worker(\`
            const { parentPort } = require('node:worker_threads');
            const $as = require(${lib.replace(/\\/g, '\\\\')});
            $as().add((as) => as.success(21)).add((as, v) => parentPort.postMessage(v * 2)).execute();
        \`, { eval: true });
        w.on('message', (m) => console.log('worker', m));
        $as().add((as) => console.log('main')).execute();`);
    assert.strictEqual(r.status, 0, r.stderr);
    assert.deepStrictEqual(r.stdout.split('\n').filter(Boolean).sort(), ['main', 'worker 42']);
});
