'use strict';
// The addon (glue/), from exactly one place:
//   - $FUTOIN_ASYNC_NODE_ADDON when set (another build, a bench);
//   - else, in a checkout (this lib/ beside the binding's meson.build and
//     glue/): the checkout's meson build, build/bindings/node/, and never
//     a native/ folder there, which can only be a leftover of an older
//     build.sh and would be loaded instead of the addon just built;
//   - else (an installed or staged package): the package's own native/,
//     which build.sh fills with the addon and its libfutoin_async.so.0.
const path = require('path');
const fs = require('fs');

function locate(libDir = __dirname, env = process.env) {
    if (env.FUTOIN_ASYNC_NODE_ADDON) {
        const p = env.FUTOIN_ASYNC_NODE_ADDON;
        if (!fs.existsSync(p)) {
            throw new Error(`futoin-async: FUTOIN_ASYNC_NODE_ADDON=${p} does not exist`);
        }
        return p;
    }
    const pkg = path.join(libDir, '..');
    const checkout = fs.existsSync(path.join(pkg, 'meson.build'))
        && fs.existsSync(path.join(pkg, 'glue'));
    const p = checkout
        ? path.join(pkg, '..', '..', 'build', 'bindings', 'node', 'futoin_async.node')
        : path.join(pkg, 'native', 'futoin_async.node');
    if (!fs.existsSync(p)) {
        throw new Error(`futoin-async: the addon futoin_async.node is not built; looked at ${p}`
            + (checkout ? ' (a checkout: ninja -C build bindings/node/futoin_async.node)' : ''));
    }
    return p;
}

const addonPath = locate();
module.exports = require(addonPath);
// where it came from (not enumerable: the addon's exports stay its own)
Object.defineProperty(module.exports, 'addonPath', { value: addonPath });
Object.defineProperty(module.exports, 'locate', { value: locate });
