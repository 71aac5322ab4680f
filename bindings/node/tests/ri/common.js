'use strict';
// What futoin-asyncsteps' test files take from the package's internal
// lib/common.js. They only name these symbols (none of them is defined
// by the package itself any more); isProduction is the public flag.
module.exports = {
    isProduction: process.env.NODE_ENV === 'production',
    HANDLE_SUCCESS: undefined,
    MAX: undefined,
    MAX_QUEUE: undefined,
    MUTEX: undefined,
    PERIOD_MS: undefined,
    THROTTLE: undefined,
    TIMER: undefined,
};
