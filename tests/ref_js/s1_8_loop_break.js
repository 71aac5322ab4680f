'use strict';
// Spec 1.8 basic loop. call_some_library(as) adds a step that prints
// "call_some_library <n>" (n = 1, 2, 3, ...) and calls success(n < 3).
// The loop body then adds a step printing "result <result>" that calls
// as.break() when result is false -> the loop runs exactly 3 iterations.
// A root step after the loop step prints "after loop <args>".
const { $as, L, A } = require( './_harness' );
let n = 0;
const call_some_library = ( as ) => {
    as.add( ( as ) => {
        ++n;
        L( 'call_some_library ' + n );
        as.success( n < 3 );
    } );
};
const root = $as();
root.add( ( as ) => {
    as.loop( ( as ) => {
        call_some_library( as );
        as.add( ( as, result ) => {
            L( 'result ' + result );
            if ( !result ) {
                // exit loop
                as.break();
            }
        } );
    } );
} );
root.add( ( as, ...args ) => L( 'after loop ' + A( args ) ) );
root.execute();
