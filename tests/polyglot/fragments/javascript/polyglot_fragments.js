'use strict';
// The polyglot fragments in JavaScript (module "polyglot_fragments" of every
// language, see tests/polyglot/README.md): step functions that a flow of a
// Node.js host program adds by name, from any language, e.g.
// asi.add_foreign("javascript", "polyglot_fragments", "echo") in a Python
// step of that flow. A step function gets (as, ...values), as any
// JavaScript step does. Found through NODE_PATH (or the host program's
// node_modules).
const LANG = 'javascript';

// echo: success() with exactly the values received
exports.echo = function echo(as, ...values) {
    as.success(...values);
};

// floats in their shortest round-trip form, 2.0 for an integral float
function floatText(x) {
    if (Number.isNaN(x)) {
        return 'nan';
    }
    if (!Number.isFinite(x)) {
        return x > 0 ? 'inf' : '-inf';
    }
    const s = String(x);
    return /[.eE]/.test(s) ? s : `${s}.0`;
}

// JavaScript has one number type: an integral number is an int here
function describeOne(v) {
    if (typeof v === 'number') {
        return Number.isInteger(v) ? `int:${v}` : `float:${floatText(v)}`;
    }
    if (typeof v === 'boolean') {
        return `bool:${v}`;
    }
    if (typeof v === 'string') {
        return `str:${v}`;
    }
    if (Buffer.isBuffer(v)) {
        return `bytes:${v.toString('hex')}`;
    }
    if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'number')) {
        const allInt = v.every((x) => Number.isInteger(x));
        return (allInt ? 'ints:' : 'floats:') + v.map((x) => (allInt ? String(x) : floatText(x))).join('|');
    }
    if (v === null || v === undefined) {
        return 'nil';
    }
    return `object:${typeof v}`;
}

// describe: one string describing the values received
exports.describe = function describe(as, ...values) {
    as.success(values.length ? values.map(describeOne).join(',') : 'none');
};

// fail: FragmentError, error_info "javascript"
exports.fail = function fail(as) {
    as.error('FragmentError', LANG);
};

// wait: a cancel handler that sets the shared state "cancelled_javascript",
// then wait (never completes by itself)
exports.wait = function wait(as) {
    as.setCancel((a) => {
        a.state[`cancelled_${LANG}`] = true;
    });
};

// read_state: success(shared state "key")
exports.read_state = function read_state(as) {
    as.success(as.state.key);
};

// write_state: shared state "from_javascript" = "javascript"
exports.write_state = function write_state(as) {
    as.state[`from_${LANG}`] = LANG;
    as.success();
};

// catch(language, module, function): that step, under an error handler
// written in JavaScript
exports.catch = function catchIt(as, language, module, func) {
    as.addForeign(language, module, func, (a, code) => {
        a.success(`caught ${code} in ${LANG}`);
    });
};
