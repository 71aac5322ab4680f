'use strict';
// Reads mocha's JSON report: prints "<label>: P passed, F failed" and,
// with --list, every failing test's full title and first error line.
const fs = require('fs');
const [file, label, list] = process.argv.slice(2);
let r;
try {
    r = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (e) {
    console.log(`${label}: 0 passed, 1 failed (no report: ${e.message})`);
    process.exit(1);
}
if (list) {
    for (const t of r.failures) {
        const msg = (t.err && t.err.message || '').split('\n')[0];
        console.log(`  FAIL ${t.fullTitle}: ${msg}`);
    }
}
console.log(`${label}: ${r.stats.passes} passed, ${r.stats.failures} failed`);
process.exit(r.stats.failures ? 1 : 0);
