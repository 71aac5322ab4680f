'use strict';
// Reads mocha's JSON report: prints "<label>: P passed, F failed"; with
// --list, every failing test's full title and first error line; with a
// list of known failures (one full title a line), a last line
// "ri-suite: K known failures (README.md), U unexpected, G listed but passing"
// and a status that fails on U or G only.
const fs = require('fs');
const [file, label, list, known] = process.argv.slice(2);
let r;
try {
    r = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (e) {
    console.log(`${label}: 0 passed, 1 failed (no report: ${e.message})`);
    process.exit(1);
}
const failed = new Set(r.failures.map((t) => t.fullTitle));
if (list === '--list') {
    for (const t of r.failures) {
        const msg = (t.err && t.err.message || '').split('\n')[0];
        console.log(`  FAIL ${t.fullTitle}: ${msg}`);
    }
}
console.log(`${label}: ${r.stats.passes} passed, ${r.stats.failures} failed`);
if (!known) {
    process.exit(r.stats.failures ? 1 : 0);
}
const listed = new Set(fs.readFileSync(known, 'utf8').split('\n').filter(Boolean));
const unexpected = [...failed].filter((t) => !listed.has(t));
const gone = [...listed].filter((t) => !failed.has(t));
for (const t of unexpected) {
    console.log(`  UNEXPECTED FAIL ${t}`);
}
for (const t of gone) {
    console.log(`  LISTED BUT PASSING (drop it from tests/ri/known-failures.txt and README.md) ${t}`);
}
console.log(`ri-suite: ${failed.size - unexpected.length} known failures (README.md), `
    + `${unexpected.length} unexpected, ${gone.length} listed but passing`);
process.exit(unexpected.length || gone.length ? 1 : 0);
