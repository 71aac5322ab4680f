'use strict';
// Mutex, Throttle and Limiter: the core's (runtime/sync), for as.sync().
// A Throttle or a Limiter has a period timer on one tool: its C object is
// made on first use on the tool of the flow (one per tool).
const native = require('./native');
const Errors = require('./Errors');

const UNLIMITED = 1e15;

class ISync {
    sync(as, _func, _onerror) {
        as.error(Errors.NotImplemented, 'ISync.sync() is not implemented');
    }
}

class CoreSync extends ISync {
    constructor(kind, make) {
        super();
        this._kind = kind;
        this._make = make;
        this._by_tool = new Map();
    }

    _futoinSync(tool) {
        let p = this._by_tool.get(tool);
        if (!p) {
            p = this._make(tool);
            this._by_tool.set(tool, p);
        }
        return p;
    }

    sync(as, func, onerror) {
        as.sync(this, func, onerror);
    }
}

class Mutex extends CoreSync {
    constructor(max = 1, max_queue = null) {
        super(0, () => this._ptr);
        this._ptr = native.mutexNew(max, max_queue === null || max_queue === undefined
            ? UNLIMITED : max_queue);
    }
}

class Throttle extends CoreSync {
    constructor(max, period_ms = 1000, max_queue = null) {
        super(1, (tool) => native.throttleNew(tool, max, period_ms,
            max_queue === null || max_queue === undefined ? UNLIMITED : max_queue));
    }
}

class Limiter extends CoreSync {
    constructor(options = {}) {
        super(2, (tool) => native.limiterNew(tool,
            options.concurrent || 1, options.max_queue || 0,
            options.rate || 1, options.period_ms || 1000, options.burst || 0));
    }
}

module.exports = { ISync, Mutex, Throttle, Limiter };
