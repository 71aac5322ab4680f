'use strict';
// Polyglot flows from Node.js (README "Polyglot"): steps of C, Python, Lua
// and Java added by name (addForeign), the state shared with them, the async
// stack across languages, and JavaScript steps by name for the other
// languages' steps (the language host "javascript" the addon registers).
const path = require('path');
const url = require('url');
const native = require('./native');

// ---- addForeign ------------------------------------------------------------

// Where the caller of `fn` is: [file, line] (structured call sites, only the
// nearest frame).
function callerSite(fn) {
    const o = {};
    const prepare = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    let cs = null;
    try {
        Error.prepareStackTrace = (_, sites) => sites;
        Error.stackTraceLimit = 1;
        Error.captureStackTrace(o, fn);
        cs = o.stack;
    } finally {
        Error.prepareStackTrace = prepare;
        Error.stackTraceLimit = limit;
    }
    const c = Array.isArray(cs) && cs[0];
    return c ? [c.getFileName() || null, c.getLineNumber() || 0] : [null, 0];
}

function checkName(v, what) {
    if (typeof v !== 'string') {
        throw new TypeError(`addForeign(): ${what} must be a string, not ${v === null ? 'null' : typeof v}`);
    }
    if (v.indexOf('\0') >= 0) {
        throw new TypeError(`addForeign(): ${what} must not contain a NUL character`);
    }
}

// The step addForeign() adds: it passes the values it gets on as FTN12
// values (numbers, strings, booleans, Buffers, arrays of numbers; other
// values as references only JavaScript can read), then adds the named step
// (futoin_host_add) as its sub-step. Its frame in an async stack is the
// addForeign() call, at the caller's file:line; the error handler given to
// addForeign() sits on it.
function foreignStep(language, module, func, caller) {
    checkName(language, 'language');
    checkName(module, 'module');
    checkName(func, 'function');
    const [file, line] = callerSite(caller);
    const step = function(as, ...values) {
        const bsi = as._live();
        if (values.length) {
            native.successStepFtn(bsi, values);
        }
        native.hostAdd(bsi, language, module, func);
    };
    step._futoinOrigin = [`addForeign(${language}, ${module}, ${func})`, file, line];
    return step;
}

// ---- the async stack ---------------------------------------------------------

function formatStack(frames) {
    if (!frames) {
        return '';
    }
    let out = '';
    frames.forEach((f, i) => {
        out += `    at ${f.language} ${f.function || '?'} (${f.file || '?'}:${f.line})\n`;
        if (frames.elided && i + 1 === frames.elidedAfter) {
            out += `    ... ${frames.elided} more\n`;
        }
    });
    return out;
}

// An unhandled error's Error gets the async stack: `asyncStack` (frames)
// and its text after the JavaScript stack.
function attachStack(e, frames) {
    try {
        Object.defineProperty(e, 'asyncStack', {
            value: frames, configurable: true, writable: true, enumerable: false,
        });
        if (typeof e.stack === 'string' && !e.stack.includes('\nasync stack:\n')) {
            e.stack += `\nasync stack:\n${formatStack(frames).replace(/\n$/, '')}`;
        }
    } catch (_) {
        // a frozen error: keep it as it is
    }
}

// Where a JavaScript function was written: [name, file, line]. V8 knows
// ([[FunctionLocation]]), and tells it through the inspector protocol (a
// session of this thread answers synchronously): three round trips, and
// for a script not seen yet a Debugger.enable that stalls the loop. So it
// is asked only when a recorded async stack is read (the core keeps the
// function until then: fn_host.c js_origin_defer), once per function.
let g_session = null;
let g_urls = new Map();
const g_where = new WeakMap();
let g_posts = 0; // inspector calls made (tests: none while errors unwind)

function post(method, params) {
    let res = null;
    let err = null;
    ++g_posts;
    g_session.post(method, params, (e, r) => {
        err = e;
        res = r;
    });
    if (err) {
        throw err;
    }
    return res;
}

function scriptUrl(id) {
    if (!g_urls.has(id)) {
        // Debugger.enable reports every script parsed so far; kept on only
        // while asking (a debugger left enabled slows code down)
        post('Debugger.enable', {});
        post('Debugger.disable', {});
    }
    let u = g_urls.get(id);
    if (u && u.startsWith('file://')) {
        try {
            u = url.fileURLToPath(u);
        } catch (_) {
            // keep the URL
        }
    }
    return u || null;
}

const WHERE_GROUP = 64;
let g_held = 0; // functions the inspector holds for us (objectGroup futoin-where)

function releaseHeld() {
    if (g_held && g_session) {
        g_held = 0;
        try {
            post('Runtime.releaseObjectGroup', { objectGroup: 'futoin-where' });
        } catch (_) {
            // the session is gone: so is what it held
        }
    }
}

function locate(fn) {
    if (g_session === false) {
        return [null, 0];
    }
    try {
        if (!g_session) {
            const inspector = require('inspector');
            g_session = new inspector.Session();
            g_session.connect();
            g_session.on('Debugger.scriptParsed', (m) => g_urls.set(m.params.scriptId, m.params.url));
        }
        globalThis.__futoin_fn_where = fn;
        const o = post('Runtime.evaluate', {
            expression: 'globalThis.__futoin_fn_where', objectGroup: 'futoin-where',
        });
        globalThis.__futoin_fn_where = undefined;
        const p = post('Runtime.getProperties', {
            objectId: o.result.objectId, ownProperties: true,
        });
        // the inspector holds the functions it named until their group is
        // released: once per WHERE_GROUP lookups (a round trip saved on
        // every other one), and when an async stack has been read
        if (++g_held >= WHERE_GROUP) {
            releaseHeld();
        }
        const loc = (p.internalProperties || []).find((x) => x.name === '[[FunctionLocation]]');
        if (!loc) {
            return [null, 0];
        }
        return [scriptUrl(loc.value.value.scriptId), loc.value.value.lineNumber + 1];
    } catch (_) {
        g_session = false; // no inspector in this Node: names only
        return [null, 0];
    }
}

function where(fn) {
    if (typeof fn !== 'function') {
        return ['?', null, 0];
    }
    if (fn._futoinOrigin) {
        return fn._futoinOrigin;
    }
    let w = g_where.get(fn);
    if (!w) {
        const [file, line] = locate(fn);
        w = [fn.name || '<anonymous>', file, line];
        g_where.set(fn, w);
    }
    return w;
}

// K_ORIGIN: the frame of a JavaScript step (its record); `later`: a
// function not located yet comes back as [name, fn], to be located by
// where() (K_WHERE) if the stack is read
function origin(rec, later) {
    if (!rec) {
        return undefined;
    }
    const fn = rec.f || rec.eh;
    if (later && typeof fn === 'function' && !fn._futoinOrigin) {
        return g_where.get(fn) || [fn.name || '<anonymous>', fn];
    }
    return where(fn);
}

// ---- JavaScript steps by name (the host "javascript") ------------------------

function requireFrom() {
    const main = require.main;
    return main && typeof main.require === 'function' ? main.require.bind(main) : require;
}

// K_RESOLVE: the record of require(module)[func], or why not (a string).
// Step names are code: `module` is what the host program's require()
// finds (its node_modules, NODE_PATH) or an absolute path; never a path
// relative to the current folder.
function resolve(module, func, Rec) {
    if (module.startsWith('./') || module.startsWith('../') || module === '.' || module === '..') {
        return `javascript: module '${module}' is a relative path (for function '${func}'): ` +
            'only a module name or an absolute path is loaded';
    }
    let m;
    try {
        m = requireFrom()(module);
    } catch (e) {
        return `javascript: cannot load module '${module}' (for function '${func}'): ${e && e.message}`;
    }
    let f = m;
    for (const part of func.split('.')) {
        f = f === null || f === undefined ? undefined : f[part];
    }
    if (typeof f !== 'function') {
        return `javascript: module '${module}' has no function '${func}'`;
    }
    const rec = new Rec(null, f, undefined);
    return rec;
}

// A JavaScript step added by name runs in a flow no AsyncSteps of this
// process owns: its steps get a root of their own whose state is the
// flow's shared state, read through the handle of the moment.
class ForeignRoot {
    constructor() {
        this._foreign = true;
        this._hbsi = 0;
        this._shared = null;
        this._js_raised = false;
        this._last_wait = null;
        this._cur = null;
        this._tool_ptr = 0;
        this._async_tool = require('./AsyncTool').AsyncTool;
        this._state_target = null;
        this.state = sharedStateOf(this);
    }

    get _root() {
        return this;
    }
}

function foreignRoot(rec, bsi) {
    let root = rec.root;
    if (!root) {
        root = new ForeignRoot();
        root._tool_ptr = native.toolOf(bsi);
        rec.root = root;
    }
    return root;
}

// ---- the state shared between languages --------------------------------------

// Names the runtime keeps per error; JavaScript's own values there.
const RESERVED = new Set(['error_info', 'last_exception', 'async_stack']);

function isScalar(v) {
    const t = typeof v;
    return t === 'number' || t === 'string' || t === 'boolean';
}

function liveBsi(owner) {
    return owner._foreign ? owner._hbsi : owner._bsi;
}

function sharedNames(owner) {
    if (!owner._shared) {
        owner._shared = new Set();
    }
    return owner._shared;
}

function sharedState(target, owner) {
    owner._state_target = target;
    return new Proxy(target, {
        get(t, k, recv) {
            if (typeof k === 'string' && !RESERVED.has(k)) {
                const bsi = liveBsi(owner);
                if (bsi) {
                    const own = Object.getOwnPropertyDescriptor(t, k);
                    if (!own || ('value' in own && (own.value === undefined || isScalar(own.value)))) {
                        const v = native.stateGet(bsi, k);
                        if (v !== undefined) {
                            sharedNames(owner).add(k);
                            return v;
                        }
                    }
                }
            }
            return Reflect.get(t, k, recv);
        },
        set(t, k, v, recv) {
            const ok = Reflect.set(t, k, v, recv);
            if (typeof k === 'string' && !RESERVED.has(k)) {
                const bsi = liveBsi(owner);
                if (bsi) {
                    if (isScalar(v)) {
                        sharedNames(owner).add(k);
                        native.stateSet(bsi, k, v);
                    } else if (owner._shared && owner._shared.has(k)) {
                        native.stateSet(bsi, k, undefined);
                    }
                }
            }
            return ok;
        },
        deleteProperty(t, k) {
            if (typeof k === 'string' && owner._shared && owner._shared.has(k)) {
                const bsi = liveBsi(owner);
                if (bsi) {
                    native.stateSet(bsi, k, undefined);
                }
            }
            return Reflect.deleteProperty(t, k);
        },
    });
}

function sharedStateOf(root) {
    const target = function state() {
        return proxy;
    };
    root._state_target = target;
    const proxy = sharedState(target, root);
    return proxy;
}

// execute(): the state's numbers, strings and booleans into the new core
// root, for the other languages' steps
function pushState(root, bsi) {
    const st = root._state_target;
    for (const k of Object.keys(st)) {
        if (!RESERVED.has(k)) {
            const v = st[k]; // JavaScript's own
            if (isScalar(v)) {
                sharedNames(root).add(k);
                native.stateSet(bsi, k, v);
            }
        }
    }
}

// the execution ended: what other languages set in the names JavaScript
// shares (or read while it ran) stays in the state after the core root is
// gone
function pullState(root, bsi) {
    if (!bsi || !root._shared) {
        return;
    }
    const t = root._state_target;
    for (const k of root._shared) {
        const v = native.stateGet(bsi, k);
        if (v !== undefined) {
            t[k] = v;
        }
    }
}

module.exports = {
    foreignStep,
    attachStack,
    formatStack,
    origin,
    where,
    releaseHeld,
    inspectorCalls: () => g_posts,
    resolve,
    foreignRoot,
    sharedState,
    pushState,
    pullState,
};
