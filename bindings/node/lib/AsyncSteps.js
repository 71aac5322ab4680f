'use strict';
// The JavaScript face of FTN12 AsyncSteps over the core's flows.
//
// - AsyncSteps is a root. Before execute() its steps wait in `_queue`
//   (plain JavaScript); execute() makes a root of the core on the tool of
//   the moment (AsyncTool: Node's own loop; AsyncToolTest: virtual time),
//   hands it the steps and runs it. That root lives for one execution: its
//   last step's release (native.execute) says the execution ended.
// - Step is the handle a step function, error handler, cancel handler or
//   loop body gets. It holds the core's handle (a number) while that is
//   valid: until the callback returns, or, for a step that waits
//   (waitExternal, setTimeout, setCancel), until the core says that the
//   step ended (native.anchor).
// - Step functions, values and the state stay JavaScript; the core holds
//   references (released by it exactly once) and runs the flow: order,
//   errors, timeouts, cancel, parallel, loops, sync objects.
const native = require('./native');
const Errors = require('./Errors');
const polyglot = require('./polyglot');

const { FutoInError } = Errors;
const isProduction = process.env.NODE_ENV === 'production';

// dispatcher kinds (glue/futoin_node.h)
const K_STEP = 0;
const K_ERROR = 1;
const K_CANCEL = 2;
const K_LOOP = 3;
const K_REPEAT = 4;
const K_UNHANDLED = 5;
const K_TIMER = 6;
const K_ENDED = 7;
const K_ROOT_END = 8;
const K_ORIGIN = 9;
const K_RESOLVE = 10;
const K_HOOK = 11;
const K_WHERE = 12;

// What break()/continue() and a handled error() throw to leave the
// callback: the flow already knows.
const LEAVE = Object.freeze({ futoinLeave: true });

let g_dispatched = 0;

// The state: a function object (the reference's `as.state()` is callable)
// behind a Proxy that shares numbers, strings and booleans with the steps
// of other languages while the root executes (futoin_state_set/get, see
// polyglot.js); everything else stays JavaScript's.
function makeState(init, owner) {
    let proxy = null;
    const state = function state() {
        return proxy;
    };
    if (init) {
        for (const k of Object.keys(init)) {
            state[k] = init[k];
        }
    }
    proxy = polyglot.sharedState(state, owner);
    return proxy;
}

function sanityError(info) {
    return new FutoInError(Errors.InternalError, info);
}

// A call through a handle that is over (a second completion, completing a
// step that did not wait, a call after the callback returned): misuse,
// refused with the reference's InternalError 'Invalid call (sanity
// check)', with no effect on the flow or its state (the cross-language
// rule; the reference also raises it into the flow).
const SANITY = 'Invalid call (sanity check)';
function deadHandle(_root) {
    return sanityError(SANITY);
}

// Error codes and loop labels cross into C strings: one with an embedded
// NUL would silently name another code or label there (the cross-language
// rules refuse it in every binding), and a code is never empty.
function codeOf(what, name) {
    const code = String(name);
    if (code === '' || code.includes('\0')) {
        throw new TypeError(`${what}: code must be a non-empty string without NUL`);
    }
    return code;
}

function checkLabel(what, label) {
    if (typeof label === 'string' && label.includes('\0')) {
        throw new TypeError(`${what}: label must be a string without NUL`);
    }
}

// ---- trace context (futoin/trace.h): per root, in the core ----------------------

// A W3C traceparent for setTrace(): null/undefined clears; anything else
// that is not a valid one is refused with a TypeError saying why (a NUL
// would end the C string: refused here, by name).
function checkTrace(traceparent) {
    if (traceparent === null || traceparent === undefined) {
        return null;
    }
    if (typeof traceparent !== 'string') {
        throw new TypeError(`setTrace(): traceparent must be a string or null, not ${typeof traceparent}`);
    }
    const why = traceparent.includes('\0') ? 'traceparent contains a NUL character'
        : native.traceCheck(traceparent);
    if (why !== null) {
        throw new TypeError(`setTrace(${JSON.stringify(traceparent)}): ${why}`);
    }
    return traceparent;
}

// native.traceGet()'s "<traceparent> <parent span id>" as the object
// trace() returns: {traceId, spanId, parentSpanId, flags, traceparent},
// or null when the flow has no context.
function traceOf(text) {
    if (text === null) {
        throw sanityError('trace(): not a live handle of this library');
    }
    if (text === '') {
        return null;
    }
    const tp = text.slice(0, 55);
    const parent = text.slice(56);
    return {
        traceId: tp.slice(3, 35),
        spanId: tp.slice(36, 52),
        parentSpanId: parent === '' ? null : parent,
        flags: parseInt(tp.slice(53, 55), 16),
        traceparent: tp,
    };
}

function setTraceOn(bsi, tp) {
    const rc = native.traceSet(bsi, tp);
    if (rc !== 0) {
        throw sanityError(`setTrace(): refused by the runtime (${rc})`);
    }
}

// The error code of an exception that is not a FutoIn error: its message
// (as in futoin-asyncsteps), or a string thrown as it is, when that is a
// code; InternalError otherwise.
function codeOfException(e) {
    const m = e instanceof Error ? e.message : e;
    return typeof m === 'string' && m !== '' && !m.includes('\0') ? m : Errors.InternalError;
}

function checkFunc(func) {
    if (isProduction) {
        return;
    }
    if (typeof func !== 'function' || func.length < 1) {
        throw sanityError('Step function must expect at least AsyncStep interface');
    }
}

function checkOnError(onerror) {
    if (isProduction || onerror === undefined || onerror === null) {
        return;
    }
    if (typeof onerror !== 'function' || onerror.length !== 2) {
        throw sanityError('Error handler must take exactly two arguments');
    }
}

// What the core holds for a step: its functions and its root.
class Rec {
    constructor(root, f, eh) {
        this.root = root;
        this.f = f;
        this.eh = eh;
        this.guarded = false;
    }
}

// The step an addSync() guards: never chained from (the runtime releases
// the sync object when the step completes the usual way).
function syncRec(root, f, eh) {
    const r = new Rec(root, f, eh);
    r.guarded = true;
    return rid(r);
}

// The records the core holds, by id: a step's data is its record's id (a
// number), not a V8 persistent handle each. The core notes the ids it
// releases; they are drained (native.releasedIds) before the table grows
// by another 1024 and when an execution ends, and their slots reused.
const g_recs = [];
const g_free = [];
const g_rel = new Uint32Array(4096);
let g_grown = 0;

function drainReleased() {
    g_grown = 0;
    for (;;) {
        const n = native.releasedIds(g_rel);
        for (let i = 0; i < n; ++i) {
            const id = g_rel[i];
            g_recs[id] = undefined;
            g_free.push(id);
        }
        if (n < g_rel.length) {
            return;
        }
    }
}

const g_ids = new Uint32Array(1024);
const g_ehs = new Uint8Array(1024);

function rid(rec) {
    if (g_free.length === 0 && g_grown >= 1024) {
        drainReleased();
    }
    if (g_free.length !== 0) {
        const id = g_free.pop();
        g_recs[id] = rec;
        return id;
    }
    ++g_grown;
    g_recs.push(rec);
    return g_recs.length - 1;
}

function hasEh(eh) {
    return eh !== undefined && eh !== null;
}

// ---- the handle of a callback ------------------------------------------------

class Step {
    constructor(root, bsi, kind = 1) {
        this._root = root;
        this._bsi = bsi;
        this._kind = kind; // 0: a step's own callback (may keep success())
        this._in_call = true;
        this._waits = false;
        this._raised = null;
        // a success() kept in the step's own callback (see success())
        this._pending = undefined;
        this._touched = false;
        this._completed = false; // by a success()/error() through it
        this._lost = false; // ended by the core while it waited (timeout, cancel)
    }

    // null once the handle is over, as the reference's
    get state() {
        return this._bsi ? this._root.state : null;
    }

    isAsyncSteps() {
        return true;
    }

    _live() {
        const bsi = this._bsi;
        if (!bsi) {
            throw deadHandle(this._root);
        }
        if (this._pending !== undefined) {
            this._flush();
        }
        this._touched = true; // the step did more than complete: never chained
        return bsi;
    }

    // the kept success() goes to the runtime before anything else does
    _flush() {
        const p = this._pending;
        this._pending = undefined;
        native.success(this._bsi, p.length ? p : undefined);
    }

    add(func, onerror) {
        checkFunc(func);
        checkOnError(onerror);
        native.add(this._live(), rid(new Rec(this._root, func, onerror)), hasEh(onerror));
        return this;
    }

    addForeign(language, module, func, onerror) {
        checkOnError(onerror);
        const g = polyglot.foreignStep(language, module, func, this.addForeign);
        native.add(this._live(), rid(new Rec(this._root, g, onerror)), hasEh(onerror));
        return this;
    }

    // The async stack of the flow's last error (an error handler's, or the
    // one a step of this flow raised): frames {language, function, file,
    // line}, innermost first, across languages.
    asyncStack() {
        return readStack(this._live());
    }

    // The flow's trace context from now on (a W3C traceparent; null
    // clears): its root's, for the steps of every language and the roots
    // newInstance() makes; each step is a span under the one it runs in.
    setTrace(traceparent) {
        setTraceOn(this._live(), checkTrace(traceparent));
        return this;
    }

    // The trace context as this step sees it: {traceId, spanId (this
    // step's), parentSpanId, flags, traceparent (to send on)}, or null.
    trace() {
        return traceOf(native.traceGet(this._live()));
    }

    parallel(onerror) {
        const p = native.parallel(this._live(),
            hasEh(onerror) ? rid(new Rec(this._root, null, onerror)) : undefined);
        return new Parallel(this, p);
    }

    sync(object, func, onerror) {
        checkFunc(func);
        checkOnError(onerror);
        const ptr = object && object._futoinSync ? object._futoinSync(this._tool()) : 0;
        if (ptr) {
            native.addSync(this._live(), ptr, syncRec(this._root, func, onerror), hasEh(onerror));
        } else {
            object.sync(this, func, onerror);
        }
        return this;
    }

    successStep(...args) {
        const vals = args;
        native.add(this._live(), rid(new Rec(this._root, (as) => as.success(...vals))), false);
        return this;
    }

    await(promise, onerror) {
        checkOnError(onerror);
        this.add(awaitStep(promise), onerror);
        return this;
    }

    loop(func, label) {
        checkLabel('loop()', label);
        native.loop(this._live(), rid(new Rec(this._root, func)), label);
        return this;
    }

    repeat(count, func, label) {
        checkLabel('repeat()', label);
        native.repeat(this._live(), rid(new Rec(this._root, func)), count, label);
        return this;
    }

    forEach(map_or_list, func, label) {
        checkLabel('forEach()', label);
        forEachOn(this, map_or_list, func, label);
        return this;
    }

    break(label) {
        checkLabel('break()', label);
        native.breakLoop(this._live(), label);
        this._raised = LEAVE;
        this._root._loop_unwind = true;
        throw LEAVE;
    }

    continue(label) {
        checkLabel('continue()', label);
        native.continueLoop(this._live(), label);
        this._raised = LEAVE;
        this._root._loop_unwind = true;
        throw LEAVE;
    }

    // true when taken; false when the step had ended meanwhile (its
    // timeout, a cancel: a late completion, dropped quietly as in every
    // binding); misuse (a second completion, a step that did not wait)
    // throws InternalError.
    // In the step's own callback, success() is kept: the dispatcher gives
    // its values to the next JavaScript step itself when the runtime lets
    // that one run in the same call (native.chain), else hands it to the
    // runtime when the callback returns; any other call through the handle
    // hands it over first, so the runtime sees every call in order.
    success(...args) {
        const bsi = this._bsi;
        if (!bsi) {
            if (this._lost) {
                return false;
            }
            throw deadHandle(this._root);
        }
        if (this._in_call && !this._waits && this._kind === 0 && !this._completed
            && !this._root._foreign) {
            if (this._pending === undefined) {
                this._pending = args;
                this._completed = true;
                return true;
            }
            this._flush();
        } else if (this._pending !== undefined) {
            this._flush();
        }
        // a step of JavaScript in a flow another language hosts passes its
        // values on as FTN12 values: the next step may be of any language
        const r = this._root._foreign
            ? native.successFtn(bsi, args)
            : native.success(bsi, args.length ? args : undefined);
        if (r < 0) {
            // refused by the core: a second completion (in the callback,
            // the core raises InternalError at the parent's handler, so
            // this throw leaves the callback without another error)
            const e = deadHandle(this._root);
            if (this._in_call) {
                this._raised = e;
            }
            throw e;
        }
        this._completed = true;
        if (!this._in_call) {
            this._bsi = 0;
        }
        return r > 0;
    }

    // Throws the error (FTN12: "throws FutoIn.Error exception
    // immediately"), also from outside the step; a late one (the step had
    // ended meanwhile) returns false instead and changes nothing.
    error(name, error_info) {
        const code = codeOf('error()', name);
        const bsi = this._bsi;
        if (!bsi) {
            if (this._lost) {
                return false;
            }
            throw deadHandle(this._root);
        }
        if (this._pending !== undefined) {
            this._flush();
        }
        const state = this._root.state;
        state.error_info = error_info;
        const e = new FutoInError(code);
        state.last_exception = e;
        this._root._js_raised = true;
        const r = native.error(bsi, code, typeof error_info === 'string' ? error_info : undefined);
        this._completed = true;
        if (this._in_call) {
            this._raised = e;
        } else {
            this._bsi = 0;
            if (r === 0) {
                // the core had ended the step (a race the lib did not see)
                this._root._js_raised = false;
                return false;
            }
        }
        throw e;
    }

    setTimeout(timeout_ms) {
        native.setTimeout(this._live(), timeout_ms);
        this._wait();
        return this;
    }

    setCancel(oncancel) {
        native.setCancel(this._live(), rid(new Rec(this._root, oncancel)));
        this._wait();
        return this;
    }

    waitExternal() {
        native.waitExternal(this._live());
        this._wait();
        return this;
    }

    copyFrom(other) {
        const q = other._queue || [];
        for (const [f, eh, sync] of q) {
            if (sync) {
                this.sync(sync, f, eh);
            } else {
                native.add(this._live(), rid(new Rec(this._root, f, eh)), hasEh(eh));
            }
        }
        copyState(this._root.state, other.state);
        return this;
    }

    // A new root on the same tool; a traced flow goes on in it under the
    // span of this step (as the core's newInstance()).
    newInstance() {
        const child = new AsyncSteps(null, this._root._async_tool);
        if (this._bsi) {
            const t = native.traceGet(this._bsi);
            child._traceparent = t ? t.slice(0, 55) : null;
        }
        return child;
    }

    _tool() {
        return this._root._tool_ptr;
    }

    _wait() {
        if (!this._waits) {
            this._waits = true;
            native.anchor(this._bsi, this);
        }
    }

    // What a callback threw: the flow's error, unless error(), break() or
    // continue() already told the flow.
    _fail(e) {
        if (e === this._raised && e !== null) {
            return;
        }
        const bsi = this._bsi;
        if (!bsi) {
            return;
        }
        if (this._pending !== undefined) {
            this._flush();
        }
        const state = this._root.state;
        state.last_exception = e;
        // a FutoInError with its info (the InternalError of a misuse in
        // this step: a call through a handle that is over) says why
        let info;
        if (e instanceof FutoInError && typeof e.info === 'string') {
            info = e.info;
            state.error_info = info;
        }
        this._root._js_raised = true;
        native.error(bsi, codeOfException(e), info);
    }
}

// ---- parallel ------------------------------------------------------------------

class Parallel {
    constructor(owner, bsi) {
        this._owner = owner;
        this._bsi = bsi;
    }

    add(func, onerror) {
        checkFunc(func);
        checkOnError(onerror);
        if (!this._owner._bsi) {
            throw deadHandle(this._owner._root);
        }
        native.add(this._bsi, rid(new Rec(this._owner._root, func, onerror)), hasEh(onerror));
        return this;
    }

    get state() {
        return this._owner._root.state;
    }

    isAsyncSteps() {
        return true;
    }
}

// A parallel() made on a root before execute(): its branches are recorded
// and added when the step standing for it runs.
class ParallelModel {
    constructor() {
        this._branches = [];
    }

    add(func, onerror) {
        checkFunc(func);
        checkOnError(onerror);
        this._branches.push([func, onerror]);
        return this;
    }

    isAsyncSteps() {
        return true;
    }
}

// ---- helpers ---------------------------------------------------------------------

function copyState(to, from) {
    for (const k of Object.keys(from)) {
        if (!(k in to)) {
            to[k] = from[k];
        }
    }
}

function forEachOn(asi, map_or_list, func, label) {
    if (Array.isArray(map_or_list)) {
        const list = map_or_list;
        asi.repeat(list.length, (as, i) => func(as, i, list[i]), label);
    } else if (typeof Map !== 'undefined' && map_or_list instanceof Map) {
        const entries = Array.from(map_or_list.entries());
        asi.repeat(entries.length, (as, i) => func(as, entries[i][0], entries[i][1]), label);
    } else {
        const obj = map_or_list;
        const keys = Object.keys(obj);
        asi.repeat(keys.length, (as, i) => func(as, keys[i], obj[keys[i]]), label);
    }
}

// await(): a step that waits for the promise. The promise's handlers are
// attached at once (no unhandled rejection), the outcome is delivered when
// both it and the step are there.
function awaitStep(promise) {
    let outcome = null;
    let step = null;
    const deliver = () => {
        const as = step;
        step = null;
        if (!as._bsi) {
            return;
        }
        try {
            if (outcome.ok) {
                as.success(outcome.v);
            } else {
                const reason = outcome.v;
                const state = as.state;
                let code = 'PromiseReject';
                if (reason instanceof Error) {
                    state.last_exception = reason;
                } else {
                    code = reason ? String(reason) : code;
                    state.last_exception = new FutoInError(code);
                }
                state.error_info = undefined;
                as._root._js_raised = true;
                native.error(as._bsi, code, undefined);
                as._bsi = 0;
            }
        } catch (_) {
            // the step ended meanwhile (cancel): nothing to deliver
        }
    };
    promise.then(
        (v) => {
            outcome = { ok: true, v };
            if (step) {
                deliver();
            }
        },
        (v) => {
            outcome = { ok: false, v };
            if (step) {
                deliver();
            }
        });
    return (as) => {
        as.waitExternal();
        as.setCancel(() => {
            step = null;
            try {
                promise.cancel();
            } catch (_) {
                // not a cancellable promise
            }
        });
        step = as;
        if (outcome) {
            // settled before the step ran: deliver after this callback
            Promise.resolve().then(() => step && deliver());
        }
    };
}

// ---- the root ---------------------------------------------------------------------

class AsyncSteps {
    constructor(state = null, async_tool = null) {
        this._shared = null;
        this.state = makeState(state, this);
        this._async_tool = async_tool || require('./AsyncTool').AsyncTool;
        this._queue = [];
        this._bsi = 0;
        this._tool_ptr = 0;
        this._js_raised = false;
        this._fresh = false; // a step ran since the last error handler
        this._loop_unwind = false;
        this._on_unhandled = null;
        this._on_end = null;
        this._cur = null;
        // the trace context while no core root holds it (before execute(),
        // after the execution): a traceparent naming the flow's parent span
        this._traceparent = null;
    }

    // What runs now, as the reference's exec stack ends (only its top).
    get _exec_stack() {
        return this._cur ? [this._cur] : [];
    }

    get _root() {
        return this;
    }

    isAsyncSteps() {
        return true;
    }

    _sanity() {
        if (this._bsi && !isProduction) {
            throw sanityError('Top level add in execution');
        }
    }

    add(func, onerror) {
        this._sanity();
        checkFunc(func);
        checkOnError(onerror);
        this._queue.push([func, onerror]);
        return this;
    }

    addForeign(language, module, func, onerror) {
        this._sanity();
        checkOnError(onerror);
        this._queue.push([polyglot.foreignStep(language, module, func, this.addForeign), onerror]);
        return this;
    }

    // The async stack of the last error this root did not handle (frames
    // {language, function, file, line}, innermost first), or null.
    asyncStack() {
        return this._bsi ? readStack(this._bsi) : this._async_stack || null;
    }

    parallel(onerror) {
        this._sanity();
        checkOnError(onerror);
        const model = new ParallelModel();
        this._queue.push([(as) => {
            const p = as.parallel();
            for (const [f, eh] of model._branches) {
                p.add(f, eh);
            }
        }, onerror]);
        return model;
    }

    sync(object, func, onerror) {
        this._sanity();
        checkFunc(func);
        checkOnError(onerror);
        if (object && object._futoinSync) {
            this._queue.push([func, onerror, object]);
        } else {
            this._queue.push([(as, ...args) => {
                as.successStep(...args);
                as.sync(object, func, onerror);
            }, undefined]);
        }
        return this;
    }

    successStep(...args) {
        this._sanity();
        this._queue.push([(as) => as.success(...args), undefined]);
        return this;
    }

    await(promise, onerror) {
        this._sanity();
        checkOnError(onerror);
        this._queue.push([awaitStep(promise), onerror]);
        return this;
    }

    loop(func, label) {
        this._sanity();
        checkLabel('loop()', label);
        this._queue.push([(as) => {
            as.loop(func, label);
        }, undefined]);
        return this;
    }

    repeat(count, func, label) {
        this._sanity();
        checkLabel('repeat()', label);
        this._queue.push([(as) => {
            as.repeat(count, func, label);
        }, undefined]);
        return this;
    }

    forEach(map_or_list, func, label) {
        this._sanity();
        checkLabel('forEach()', label);
        this._queue.push([(as) => {
            as.forEach(map_or_list, func, label);
        }, undefined]);
        return this;
    }

    copyFrom(other) {
        this._queue.push(...other._queue);
        copyState(this.state, other.state);
        return this;
    }

    newInstance() {
        const child = new AsyncSteps(null, this._async_tool);
        const t = this.trace();
        child._traceparent = t ? t.traceparent : null;
        return child;
    }

    // The trace context of this root (see Step's setTrace()): held by the
    // core root while it executes, else here until execute() gives it one.
    setTrace(traceparent) {
        const tp = checkTrace(traceparent);
        if (this._bsi) {
            setTraceOn(this._bsi, tp);
        }
        this._traceparent = tp;
        return this;
    }

    // Through the root's own handle: spanId is the span the flow goes on
    // under, parentSpanId null.
    trace() {
        if (this._bsi) {
            return traceOf(native.traceGet(this._bsi));
        }
        const tp = this._traceparent;
        return tp ? traceOf(`00-${tp.slice(3, 35)}-${tp.slice(36, 52)}-${tp.slice(53, 55)} `) : null;
    }

    // FTN12 §2.2.2: error() belongs to a step's handle (its callback, or an
    // external event completing the step that waits); a root has the
    // Control API (execute, cancel, promise). The core refuses
    // handle_error() on a root as misuse, and so does every binding: it
    // throws InternalError here and changes nothing (futoin-asyncsteps
    // instead raises it at the step running now; README, "Deliberate
    // differences").
    error(_name, _error_info) {
        throw sanityError('error() is for a step\'s own handle, not a root');
    }

    execute(unhandled_error) {
        if (this._bsi) {
            throw sanityError('Invalid call (sanity check): already executing');
        }
        const q = this._queue;
        this._queue = [];
        this._on_unhandled = typeof unhandled_error === 'function'
            ? unhandled_error : this._on_unhandled;
        if (!q.length) {
            return this;
        }
        const tool = this._async_tool._native();
        const bsi = native.rootNew(tool);
        // runs of plain steps go over in one call each (native.addMany)
        let n = 0;
        for (let i = 0; i < q.length; ++i) {
            const e = q[i];
            const f = e[0];
            const eh = e[1];
            const sync = e[2];
            if (sync) {
                if (n) {
                    native.addMany(bsi, g_ids, n, g_ehs);
                    n = 0;
                }
                native.addSync(bsi, sync._futoinSync(tool), syncRec(this, f, eh), hasEh(eh));
                continue;
            }
            if (n === g_ids.length) {
                native.addMany(bsi, g_ids, n, g_ehs);
                n = 0;
            }
            g_ids[n] = rid(new Rec(this, f, eh));
            g_ehs[n] = hasEh(eh) ? 1 : 0;
            ++n;
        }
        if (n) {
            native.addMany(bsi, g_ids, n, g_ehs);
        }
        if (this._traceparent) {
            setTraceOn(bsi, this._traceparent);
        }
        this._bsi = bsi;
        this._tool_ptr = tool;
        this._async_stack = null;
        polyglot.pushState(this, bsi);
        native.execute(bsi, this);
        return this;
    }

    cancel() {
        if (this._bsi) {
            native.cancel(this._bsi);
        }
        return this;
    }

    promise() {
        return new Promise((resolve, reject) => {
            let done = false;
            this.add((as, ...result) => {
                done = true;
                resolve(result[0]);
            });
            this._on_unhandled = (code) => {
                done = true;
                const le = this.state.last_exception;
                const e = le instanceof Error && le.message === code ? le : new FutoInError(code);
                if (this._async_stack && e instanceof Error) {
                    polyglot.attachStack(e, this._async_stack);
                }
                reject(e);
            };
            this._on_end = () => {
                // an unhandled error is reported after the end step's
                // release (each from its own callback of the loop, with
                // microtasks in between): decide on the next turn
                setImmediate(() => {
                    if (!done) {
                        done = true;
                        reject(new FutoInError('Cancelled'));
                    }
                });
            };
            this.execute();
        });
    }

    _ended() {
        drainReleased();
        polyglot.pullState(this, this._bsi);
        const t = native.traceGet(this._bsi);
        if (t !== null) {
            this._traceparent = t ? t.slice(0, 55) : null;
        }
        this._bsi = 0;
        this._loop_unwind = false;
        const f = this._on_end;
        this._on_end = null;
        if (f) {
            f();
        }
    }
}

// The async stack of the last error of the root of `bsi`: reading it
// locates the functions it names that were not located yet (inspector
// calls, lib/polyglot.js), whose hold the inspector then lets go of.
function readStack(bsi) {
    const frames = native.asyncStack(bsi);
    polyglot.releaseHeld();
    return frames;
}

// ---- the dispatcher: every call from the core --------------------------------------

// After a break() or continue(): once the unwinding reached its loop, the
// core forgets the flow's last error (last_exception and error_info read
// as null, as in the reference); the state follows the core's accessor.
function afterLoopUnwind(root, bsi) {
    root._loop_unwind = false;
    if (native.errorCode(bsi) === undefined) {
        const state = root.state;
        state.error_info = undefined;
        state.last_exception = undefined;
        state.async_stack = undefined;
    }
}

// An error reaches a handler (or the root, unhandled). One the core raised
// (a Timeout, a loop's break or continue) is shown in the state as the
// core's accessors show it (and as the reference's on_timeout does); one
// that JavaScript raised is there already. When no step ran since the last
// handler, it is the same error unwinding on: what that handler did to the
// state stays.
function coreError(root, code, info) {
    if (!root._js_raised && root._fresh) {
        root.state.error_info = info;
        root.state.last_exception = new FutoInError(code);
    }
    root._js_raised = false;
    root._fresh = false;
}

function callStep(rec, bsi, fn, a1, a2, a3) {
    const root = rec.root;
    const h = new Step(root, bsi);
    root._cur = fn;
    try {
        fn(h, a1, a2, a3);
    } catch (e) {
        h._fail(e);
    }
    h._in_call = false;
    if (!h._waits) {
        h._bsi = 0;
    }
}

// A step's callback, then the JavaScript steps after it while the runtime
// lets them run in this call (native.chain): each completes the one
// before; the values a step kept go to the next one as they are.
const g_chain_slot = new Float64Array(1); // chain(): the next step's handle
native.chainInit(g_chain_slot);
const g_no_chain = !!process.env.FUTOIN_NODE_NO_CHAIN;

function runSteps(rec, bsi, vals) {
    for (;;) {
        let root = rec.root;
        let fr = null;
        let prev = 0;
        if (!root || root._foreign) {
            fr = root = polyglot.foreignRoot(rec, bsi);
            prev = fr._hbsi;
            fr._hbsi = bsi;
        }
        if (root._loop_unwind) {
            afterLoopUnwind(root, bsi);
        }
        root._fresh = true;
        const h = new Step(root, bsi, 0);
        root._cur = rec.f;
        let threw = false;
        try {
            if (vals === undefined) {
                rec.f(h);
            } else if (vals.length === 1) {
                rec.f(h, vals[0]);
            } else {
                rec.f(h, ...vals);
            }
        } catch (e) {
            threw = true;
            h._fail(e);
        }
        h._in_call = false;
        if (fr) {
            fr._hbsi = prev;
        }
        if (threw || h._waits) {
            if (!h._waits) {
                h._bsi = 0;
            }
            return;
        }
        const p = h._pending;
        h._pending = undefined;
        const nrec = g_no_chain || rec.guarded || h._touched ? undefined : native.chain(bsi);
        if (nrec === undefined) {
            if (p !== undefined) {
                native.success(bsi, p.length ? p : undefined);
            }
            h._bsi = 0;
            return;
        }
        h._bsi = 0;
        rec = typeof nrec === 'number' ? g_recs[nrec] : nrec;
        bsi = g_chain_slot[0];
        vals = p !== undefined && p.length ? p : undefined;
    }
}

function dispatch(kind, rec, a, b, c) {
    ++g_dispatched;
    if (typeof rec === 'number') {
        rec = g_recs[rec];
    }
    if ((kind === K_REPEAT || kind === K_LOOP) && !rec.root._foreign) {
        // the hot path of loops
        const root = rec.root;
        if (root._loop_unwind) {
            afterLoopUnwind(root, a);
        }
        root._fresh = true;
        callStep(rec, a, rec.f, b);
        return undefined;
    }
    // a step of a JavaScript step added by name (polyglot.foreignRoot): its
    // root reads the shared state through the handle of the moment
    if (kind !== K_STEP && kind <= K_REPEAT && (!rec.root || rec.root._foreign)) {
        const fr = polyglot.foreignRoot(rec, a);
        const prev = fr._hbsi;
        fr._hbsi = a;
        try {
            return dispatchTo(kind, rec, a, b, c);
        } finally {
            fr._hbsi = prev;
        }
    }
    return dispatchTo(kind, rec, a, b, c);
}

function dispatchTo(kind, rec, a, b, c) {
    switch (kind) {
    case K_STEP:
        runSteps(rec, a, b);
        break;
    case K_ERROR: {
        const root = rec.root;
        coreError(root, b, c);
        root.state.async_stack = [root._cur, rec.eh];
        callStep(rec, a, rec.eh, b);
        break;
    }
    case K_CANCEL: {
        const h = new Step(rec.root, a);
        try {
            rec.f(h);
        } catch (e) {
            process.emitWarning(`futoin-async: a cancel handler threw: ${e}`);
        }
        h._bsi = 0;
        break;
    }
    case K_LOOP:
    case K_REPEAT:
        // (error handlers, K_ERROR, run while the unwinding goes on)
        if (rec.root._loop_unwind) {
            afterLoopUnwind(rec.root, a);
        }
        rec.root._fresh = true;
        callStep(rec, a, rec.f, b);
        break;
    case K_UNHANDLED: {
        const root = rec;
        root._async_stack = readStack(a);
        coreError(root, b, c);
        const f = root._on_unhandled;
        if (f) {
            try {
                f(b);
            } catch (e) {
                process.nextTick(() => {
                    throw e;
                });
            }
        }
        break;
    }
    case K_TIMER:
        rec._fire();
        break;
    case K_ENDED:
        // rec: a Step that waited; ended by the core without a completion
        // through it (a timeout, a cancel), a later one is late, not misuse
        rec._bsi = 0;
        if (!rec._completed) {
            rec._lost = true;
        }
        break;
    case K_ROOT_END:
        rec._ended();
        break;
    case K_ORIGIN:
        return polyglot.origin(rec, a);
    case K_WHERE:
        return polyglot.where(rec);
    case K_RESOLVE:
        return polyglot.resolve(a, b, Rec);
    case K_HOOK:
        require('./AsyncTool')._hook(a, b);
        break;
    default:
        break;
    }
}

native.setDispatcher(dispatch);

AsyncSteps.Step = Step;
AsyncSteps.dispatchCount = () => g_dispatched;
AsyncSteps.isProduction = isProduction;
module.exports = AsyncSteps;
