'use strict';
// Run by test.sh inside a fresh project outside the checkout, where
// `npm install --offline` put the packed tarball, in an environment with
// nothing of the checkout (env -i: no NODE_PATH, no FUTOIN_ASYNC_NODE_ADDON):
// the installed package must load its own addon and library and run a
// flow with a step of C and an error with its async stack.
// Last line: "package: N passed, M failed".
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const results = [];
function check(name, f) {
    try {
        f();
        results.push(true);
        console.log(`ok - ${name}`);
    } catch (e) {
        results.push(false);
        console.log(`not ok - ${name}: ${e && e.stack || e}`);
    }
}

function summary() {
    const pass = results.filter(Boolean).length;
    console.log(`package: ${pass} passed, ${results.length - pass} failed`);
    process.exitCode = pass === results.length ? 0 : 1;
}

const pkgDir = path.join(__dirname, 'node_modules', 'futoin-async');
let $as = null;

check('require("futoin-async") is the installed package, with its own addon and library', () => {
    assert.strictEqual(process.env.NODE_PATH, undefined);
    assert.strictEqual(process.env.FUTOIN_ASYNC_NODE_ADDON, undefined);
    assert.strictEqual(require.resolve('futoin-async'), path.join(pkgDir, 'lib', 'index.js'));
    $as = require('futoin-async');
    const native = require('futoin-async/lib/native');
    assert.strictEqual(native.addonPath, path.join(pkgDir, 'native', 'futoin_async.node'));
    const libs = fs.readFileSync('/proc/self/maps', 'utf8').split('\n')
        .filter((l) => /libfutoin_async\.so/.test(l)).map((l) => l.split(/\s+/).pop());
    assert.ok(libs.length > 0, 'libfutoin_async is mapped');
    for (const l of new Set(libs)) {
        assert.strictEqual(path.dirname(l), path.join(pkgDir, 'native'), l);
    }
});

function cFlow() {
    return new Promise((resolve, reject) => {
        const got = {};
        $as()
            .add((as) => as.success(3, 4))
            .addForeign('c', 'libm.so.6', 'double hypot(double, double)')
            .add((as, h) => {
                got.hypot = h;
                as.add(function failing(as) {
                    as.error('MyError', 'it broke');
                });
            }, (as, err) => {
                got.err = err;
                got.info = as.state.error_info;
                got.stack = as.asyncStack();
                as.success();
            })
            .add(function unhandled(as) {
                as.error('Unhandled', 'nobody takes it');
            })
            .promise()
            .then(() => reject(new Error('the flow succeeded')),
                  (e) => {
                      got.rejected = e;
                      resolve(got);
                  });
    });
}

if (!$as) {
    summary();
} else {
    cFlow().then((got) => {
        check('a flow with a step of C (libm hypot) gets its result', () => {
            assert.strictEqual(got.hypot, 5);
        });
        check('an error reaches its handler with its info and async stack', () => {
            assert.strictEqual(got.err, 'MyError');
            assert.strictEqual(got.info, 'it broke');
            assert.ok(Array.isArray(got.stack) && got.stack.length >= 2, JSON.stringify(got.stack));
            assert.strictEqual(got.stack[0].language, 'javascript');
            assert.strictEqual(got.stack[0].function, 'failing');
            assert.strictEqual(got.stack[0].file, __filename);
            assert.ok(got.stack[0].line > 0);
        });
        check('an unhandled error rejects promise() with its async stack', () => {
            const e = got.rejected;
            assert.strictEqual(e.message, 'Unhandled');
            assert.ok(Array.isArray(e.asyncStack), String(e.stack));
            assert.strictEqual(e.asyncStack[0].function, 'unhandled');
            assert.match(e.stack, /unhandled \(.*check\.js:\d+\)/);
        });
        summary();
    }, (e) => {
        check('the flow ran', () => {
            throw e;
        });
        summary();
    });
}
