'use strict';
// The addon (glue/), found in this order: $FUTOIN_ASYNC_NODE_ADDON, the
// package's own copy (native/, what build.sh and `npm pack` put there),
// the checkout's meson build (build/bindings/node/).
const path = require('path');
const fs = require('fs');

function locate() {
    const env = process.env.FUTOIN_ASYNC_NODE_ADDON;
    const tried = [];
    const candidates = env ? [env] : [];
    candidates.push(path.join(__dirname, '..', 'native', 'futoin_async.node'));
    candidates.push(path.join(__dirname, '..', '..', '..', 'build', 'bindings', 'node',
                              'futoin_async.node'));
    for (const c of candidates) {
        tried.push(c);
        if (fs.existsSync(c)) {
            return c;
        }
    }
    throw new Error(`futoin-async: the addon futoin_async.node is not built; looked at ${tried.join(', ')}`);
}

module.exports = require(locate());
