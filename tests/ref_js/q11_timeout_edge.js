'use strict';
// Q11: setTimeout(0); setTimeout() called twice in one step.
// Step S has onerror "S onerror <err>"; N after it prints "N run <args>".
const { $as, L, A, scenarios } = require( './_harness' );
const run = ( S ) => {
    $as()
        .add( S, ( as, err ) => L( 'S onerror ' + err ) )
        .add( ( as, ...args ) => L( 'N run ' + A( args ) ) )
        .execute();
};
const tryIt = ( what, fn ) => {
    try {
        fn();
        L( what + ' returned' );
    } catch ( e ) {
        L( what + ' threw ' + e.message );
    }
};

scenarios( [
    [ 'a: setTimeout(0) and nothing else', () => run( ( as ) => {
        L( 'S run' );
        as.setTimeout( 0 );
    } ) ],
    [ 'b: setTimeout(0) then success(v) synchronously', () => run( ( as ) => {
        L( 'S run' );
        as.setTimeout( 0 );
        as.success( 'v' );
    } ) ],
    [ 'c: setTimeout(10) then setTimeout(200); external success at 100 ms', () => run( ( as ) => {
        L( 'S run' );
        as.setTimeout( 10 );
        as.setTimeout( 200 );
        setTimeout( () => tryIt( 'external success(v)', () => as.success( 'v' ) ), 100 );
    } ) ],
    [ 'd: setTimeout(200) then setTimeout(10); external success at 100 ms', () => run( ( as ) => {
        L( 'S run' );
        as.setTimeout( 200 );
        as.setTimeout( 10 );
        setTimeout( () => tryIt( 'external success(v)', () => as.success( 'v' ) ), 100 );
    } ) ],
    [ 'e: setTimeout(10) then setCancel: cancel handler runs on timeout', () => run( ( as ) => {
        L( 'S run' );
        as.setTimeout( 10 );
        as.setCancel( ( as ) => L( 'S cancel' ) );
    } ) ],
] );
