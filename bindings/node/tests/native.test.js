'use strict';
// lib/native.js loads the addon of the package it is in: in a checkout the
// meson build's, never a native/ folder left in the source tree (an older
// build.sh staged the package there, and later runs silently loaded that
// stale addon); in an installed package its own native/, never a build
// tree that happens to lie above it. Each layout is made in a temporary
// folder around a copy of lib/native.js, with files that are no addon: the
// load fails, and its error names the file it tried.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const realNative = path.join(__dirname, '..', 'lib', 'native.js');

function tree(files) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'futoin-native-'));
    for (const [rel, text] of Object.entries(files)) {
        const p = path.join(root, rel);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, text);
    }
    return root;
}

// loads DIR/lib/native.js in a node with no FUTOIN_ASYNC_NODE_ADDON; the
// message of what it threw
function load(libDir, extraEnv = {}) {
    const env = { ...process.env, ...extraEnv };
    if (!('FUTOIN_ASYNC_NODE_ADDON' in extraEnv)) {
        delete env.FUTOIN_ASYNC_NODE_ADDON;
    }
    const r = spawnSync(process.execPath, ['-e', `
        try { require(${JSON.stringify(path.join(libDir, 'native.js'))}); console.log('loaded'); }
        catch (e) { console.log(e.message); }`], { encoding: 'utf8', env });
    assert.strictEqual(r.status, 0, r.stderr);
    return r.stdout;
}

const nativeJs = fs.readFileSync(realNative, 'utf8');
const NOT_AN_ADDON = 'not an ELF file\n';

test('a checkout loads its build tree\'s addon, not a native/ leftover', (t) => {
    const root = tree({
        'bindings/node/meson.build': '',
        'bindings/node/glue/fn_module.c': '',
        'bindings/node/lib/native.js': nativeJs,
        'bindings/node/native/futoin_async.node': NOT_AN_ADDON,
        'build/bindings/node/futoin_async.node': NOT_AN_ADDON,
    });
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const msg = load(path.join(root, 'bindings', 'node', 'lib'));
    assert.match(msg, /build\/bindings\/node\/futoin_async\.node/);
    assert.doesNotMatch(msg, /bindings\/node\/native\//);
});

test('a checkout without a build says so, and does not fall back to native/', (t) => {
    const root = tree({
        'bindings/node/meson.build': '',
        'bindings/node/glue/fn_module.c': '',
        'bindings/node/lib/native.js': nativeJs,
        'bindings/node/native/futoin_async.node': NOT_AN_ADDON,
    });
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const msg = load(path.join(root, 'bindings', 'node', 'lib'));
    assert.match(msg, /not built; looked at .*build\/bindings\/node\/futoin_async\.node/);
});

test('an installed package loads its own native/, not a build tree above it', (t) => {
    const root = tree({
        'node_modules/futoin-async/package.json': '{}',
        'node_modules/futoin-async/lib/native.js': nativeJs,
        'node_modules/futoin-async/native/futoin_async.node': NOT_AN_ADDON,
        'build/bindings/node/futoin_async.node': NOT_AN_ADDON,
    });
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const msg = load(path.join(root, 'node_modules', 'futoin-async', 'lib'));
    assert.match(msg, /futoin-async\/native\/futoin_async\.node/);
    assert.doesNotMatch(msg, /build\/bindings/);
});

test('FUTOIN_ASYNC_NODE_ADDON wins, and a missing one is an error', (t) => {
    const root = tree({
        'node_modules/futoin-async/lib/native.js': nativeJs,
        'node_modules/futoin-async/native/futoin_async.node': NOT_AN_ADDON,
        'other/futoin_async.node': NOT_AN_ADDON,
    });
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const lib = path.join(root, 'node_modules', 'futoin-async', 'lib');
    const other = path.join(root, 'other', 'futoin_async.node');
    assert.match(load(lib, { FUTOIN_ASYNC_NODE_ADDON: other }), /other\/futoin_async\.node/);
    assert.match(load(lib, { FUTOIN_ASYNC_NODE_ADDON: other + '.missing' }),
                 /FUTOIN_ASYNC_NODE_ADDON=.*missing does not exist/);
});

test('this checkout\'s tests run on the build tree\'s addon', () => {
    if (process.env.FUTOIN_ASYNC_NODE_ADDON) {
        return;
    }
    const native = require('../lib/native');
    assert.strictEqual(native.addonPath,
                       path.join(__dirname, '..', '..', '..', 'build', 'bindings', 'node',
                                 'futoin_async.node'));
});
