'use strict';
// The tools a root runs on.
//
// AsyncTool: the core's tool attached to Node's own libuv loop (one per
// JavaScript thread: a Worker has its own). Its handles keep Node alive
// only while flows or timers have work.
//
// AsyncToolTest: a tool on virtual time with a loop of its own, driven by
// hand: run() runs everything (jumping the clock from timer to timer),
// nextEvent() one turn. resetEvents() drops what is pending by setting
// the tool aside (its flows never run again) and starting a new one.
const native = require('./native');

// the tools whose hooks are set, by their core tool's pointer
const g_hooked = new Map();

class Event {
    constructor(tool, f, t) {
        this.f = f;
        this.t = t;
        this._tool = tool;
        this._id = 0;
        this._done = false;
    }

    _fire() {
        this._done = true;
        this._tool._fired(this);
        try {
            this.f();
        } catch (e) {
            this._tool._thrown(e);
        }
    }
}

function makeTool(name, virtual) {
    const tool = {
        _ptr: 0,
        _events: [],
        _error: null,
        _set_aside: [],

        _hooks: null,

        _native() {
            if (!this._ptr) {
                this._ptr = virtual ? native.toolNewVirtual() : native.toolMain();
                if (this._hooks) {
                    // a new core tool (resetEvents()): the same listener
                    this._applyHooks();
                }
            }
            return this._ptr;
        },

        _applyHooks() {
            const ptr = this._ptr;
            if (this._hooks) {
                g_hooked.set(ptr, this);
            }
            if (native.toolSetHooks(ptr, !!this._hooks) !== 0) {
                this._hooks = null;
                g_hooked.delete(ptr);
                throw new Error(`${name}.setHooks(): refused by the runtime`);
            }
            if (!this._hooks) {
                g_hooked.delete(ptr);
            }
        },

        // Watches this tool's flows (futoin/sys/hooks.h): `listener` gets
        // every event (flow_started/finished, step_entered/left,
        // error_raised/handled, cancel, wait_begun/ended,
        // sync_acquired/released) at the moment it happens, as one object
        // {event, rootId, now, language, function, file, line, code, info,
        // outcome, waitKind, due, waitLanguage, sync} (null / 0 for the
        // fields an event has not). null clears it. Any time, from inside
        // the listener too (the new one serves from the next event). The
        // listener must not change flows; what it throws is thrown as an
        // uncaught exception (AsyncToolTest: from run()/nextEvent()).
        setHooks(listener) {
            if (listener !== null && listener !== undefined && typeof listener !== 'function') {
                throw new TypeError(`${name}.setHooks(): listener must be a function or null`);
            }
            this._hooks = listener || null;
            this._native();
            this._applyHooks();
        },

        // A live dump (futoin_tool_dump()): every live root of this tool,
        // what each of its flows waits on and since when, its async stack
        // and state keys; one "root=<id> ..." line each (format:
        // futoin/async.h).
        dump() {
            return native.toolDump(this._native());
        },

        _fired(ev) {
            if (virtual) {
                const i = this._events.indexOf(ev);
                if (i >= 0) {
                    this._events.splice(i, 1);
                }
            }
        },

        _thrown(e) {
            if (virtual) {
                if (!this._error) {
                    this._error = e;
                }
            } else {
                process.nextTick(() => {
                    throw e;
                });
            }
        },

        _rethrow() {
            const e = this._error;
            if (e) {
                this._error = null;
                throw e;
            }
        },

        callLater(func, timeout_ms = 0) {
            const ptr = this._native();
            const ms = timeout_ms > 0 ? timeout_ms : 0;
            const ev = new Event(this, func, virtual ? native.toolNow(ptr) + ms : 0);
            ev._id = native.callLater(ptr, ms, ev);
            if (virtual) {
                const evs = this._events;
                let i = evs.length;
                while (i > 0 && evs[i - 1].t > ev.t) {
                    --i;
                }
                evs.splice(i, 0, ev);
            }
            return ev;
        },

        cancelCall(ev) {
            if (ev && ev instanceof Event && !ev._done) {
                ev._done = true;
                native.cancelCall(ev._id);
                this._fired(ev);
            }
        },

        callImmediate(func) {
            return this.callLater(func, 0);
        },

        cancelImmediate(ev) {
            this.cancelCall(ev);
        },
    };
    Object.defineProperty(tool, 'name', { value: name });
    if (virtual) {
        Object.assign(tool, {
            // One turn of the loop; when it ran none of our callbacks, the
            // clock moves to the next timer.
            nextEvent() {
                const ptr = this._native();
                const AsyncSteps = require('./AsyncSteps');
                const before = AsyncSteps.dispatchCount();
                native.toolRunNowait(ptr);
                if (AsyncSteps.dispatchCount() === before) {
                    const due = native.toolNextDue(ptr);
                    if (due >= 0) {
                        native.toolAdvance(ptr, due);
                    }
                }
                this._rethrow();
            },

            hasEvents() {
                return this._events.length > 0;
            },

            getEvents() {
                return this._events;
            },

            resetEvents() {
                for (const ev of this._events) {
                    ev._done = true;
                    native.cancelCall(ev._id);
                }
                this._events = [];
                if (this._ptr) {
                    g_hooked.delete(this._ptr);
                    // flows still on it stay there, never to run again
                    if (native.toolFree(this._ptr) !== 0) {
                        this._set_aside.push(this._ptr);
                    }
                    this._ptr = 0;
                }
            },

            run() {
                const ptr = this._native();
                for (;;) {
                    native.toolRun(ptr);
                    this._rethrow();
                    const due = native.toolNextDue(ptr);
                    if (due < 0) {
                        break;
                    }
                    native.toolAdvance(ptr, due);
                    this._rethrow();
                }
            },

            // virtual time, for tests: the clock, and moving it
            now() {
                return native.toolNow(this._native());
            },

            advance(ms) {
                native.toolAdvance(this._native(), ms);
                this._rethrow();
            },

            nextDue() {
                const d = native.toolNextDue(this._native());
                return d < 0 ? undefined : d;
            },
        });
    } else {
        tool.now = function() {
            return native.toolNow(this._native());
        };
    }
    return tool;
}

// A hook event of the tool at `ptr` (the dispatcher's K_HOOK).
exports._hook = function(ptr, ev) {
    const tool = g_hooked.get(ptr);
    const f = tool && tool._hooks;
    if (f) {
        try {
            f(ev);
        } catch (e) {
            tool._thrown(e);
        }
    }
};

exports.AsyncTool = makeTool('AsyncTool', false);
exports.AsyncToolTest = makeTool('AsyncToolTest', true);
