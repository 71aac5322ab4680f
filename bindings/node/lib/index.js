'use strict';
// futoin-async: FTN12 AsyncSteps for Node.js on libfutoin_async, with the
// API of futoin-asyncsteps 2.5 (see ../README.md for the differences).
const AsyncSteps = require('./AsyncSteps');
const { AsyncTool, AsyncToolTest } = require('./AsyncTool');
const Errors = require('./Errors');
const { ISync, Mutex, Throttle, Limiter } = require('./sync');
const native = require('./native');

const $as = function() {
    return new AsyncSteps(null, $as.ActiveAsyncTool);
};

$as.ActiveAsyncTool = AsyncTool;
$as.AsyncTool = AsyncTool;
$as.AsyncToolTest = AsyncToolTest;
$as.FutoInError = Errors;
$as.Errors = Errors;
$as.AsyncSteps = AsyncSteps;
$as.isProduction = AsyncSteps.isProduction;
$as.ISync = ISync;
$as.Mutex = Mutex;
$as.Throttle = Throttle;
$as.Limiter = Limiter;
Object.defineProperty($as, 'coreVersion', { value: native.version });
// references of JavaScript objects the core holds now (released exactly
// once each; for leak checks)
// (not enumerable: the reference's exports are listed by its own tests)
Object.defineProperty($as, 'liveRefs', { value: () => native.liveRefs() });
Object.defineProperty($as, 'formatAsyncStack', { value: require('./polyglot').formatStack });

$as.installAsyncToolTest = function(install) {
    $as.ActiveAsyncTool = (install === false) ? AsyncTool : AsyncToolTest;
};

$as.assertAS = function(as) {
    try {
        if (as.isAsyncSteps()) {
            return;
        }
    } catch (_) {
        // not one
    }
    throw new Error(`Not an instance of AsyncSteps: ${as}`);
};

Object.defineProperty($as, 'testcase', {
    enumerable: true,
    get: () => require('./testcase'),
});

module.exports = $as;
