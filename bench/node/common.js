'use strict';
// What the Node.js benches share: their options, the reference
// (futoin-asyncsteps 2.5.5) and the median of a round's numbers.
const path = require('path');

const repo = path.resolve(__dirname, '..', '..');

// the number after option `name` on the command line, or `dflt`
function opt(name, dflt) {
    const args = process.argv.slice(2);
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : dflt;
}

// The reference where bindings/node/ri-suite.sh installs it
// ($FUTOIN_RI_CACHE, default build/node-ri/node_modules), or by require();
// null when neither has it.
function loadReference() {
    const cache = process.env.FUTOIN_RI_CACHE || path.join(repo, 'build', 'node-ri');
    for (const p of [path.join(cache, 'node_modules', 'futoin-asyncsteps'), 'futoin-asyncsteps']) {
        try {
            return require(p);
        } catch (_) {
            // next
        }
    }
    return null;
}

function median(a) {
    const s = [...a].sort((x, y) => x - y);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

module.exports = { repo, opt, loadReference, median };
