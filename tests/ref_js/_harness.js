'use strict';
// Tiny helper shared by the trace scripts (not part of the reference package).
//  L(...)      print one line: arguments joined by a single space
//  A(args)     format a success-args array as "[a,b]" ("[]" when empty)
//  scenarios() run named scenarios one after another; the next one starts
//              only when the Node event loop has fully drained (beforeExit),
//              so scenarios never interleave and hanging ones simply end.
const $as = require( 'futoin-asyncsteps' );

const L = ( ...a ) => console.log( a.join( ' ' ) );
const A = ( args ) => '[' + args.map( String ).join( ',' ) + ']';

function scenarios( list ) {
    let i = 0;
    const next = () => {
        if ( i < list.length ) {
            const [ name, fn ] = list[i++];
            L( '== ' + name + ' ==' );
            fn();
            // keep the loop alive one more turn so that 'beforeExit' fires
            // again even if the scenario only left promise (microtask) work
            setImmediate( () => {} );
        }
    };
    process.on( 'beforeExit', next );
    next();
}

// external completion helpers: swallow the exception that error() throws
// when called outside of the engine (as the spec 3.5 example does)
const extError = ( as, code, info ) => {
    try {
        as.error( code, info );
    } catch ( e ) { /* ignore */ }
};

module.exports = { $as, L, A, scenarios, extError };
