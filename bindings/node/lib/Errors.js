'use strict';
// The FTN12 standard error codes (the core's list, futoin/errors.h). An
// error is a JavaScript Error whose message is its code (as.error() throws
// one; error handlers get the code as a string).
const codes = [
    'ConnectError', 'CommError', 'UnknownInterface', 'NotSupportedVersion',
    'NotImplemented', 'Unauthorized', 'InternalError', 'InvokerError',
    'InvalidRequest', 'DefenseRejected', 'PleaseReauth', 'SecurityError',
    'Timeout', 'LoopBreak', 'LoopCont', 'PromiseReject',
];

class Errors {}
for (const c of codes) {
    Object.defineProperty(Errors, c, { value: c, enumerable: true });
}

/** A JavaScript Error carrying an FTN12 code (`message` and `code`). */
class FutoInError extends Error {
    constructor(code, info) {
        super(String(code));
        Object.defineProperty(this, 'code', { value: String(code), enumerable: true });
        if (info !== undefined) {
            Object.defineProperty(this, 'info', { value: info, enumerable: true });
        }
    }
}
Object.defineProperty(Errors, 'FutoInError', { value: FutoInError });

module.exports = Errors;
