'use strict';
// Q12: a parallel branch waits with a timeout while a sibling branch errors.
// P = parallel with onerror "P onerror <err>"; N after it prints "N run <args>".
// Any handler printing after ~50 ms would prove the timer was left running.
const { $as, L, A, scenarios, extError } = require( './_harness' );
const eh = ( n ) => ( as, err ) => L( n + ' onerror ' + err );

scenarios( [
    [ 'a: b1 setTimeout(50)+setCancel waits; b2 errors E2 from setImmediate', () => {
        const root = $as();
        root.parallel( eh( 'P' ) )
            .add( ( as ) => {
                L( 'b1 run' );
                as.setTimeout( 50 );
                as.setCancel( ( as ) => L( 'b1 cancel' ) );
            }, eh( 'b1' ) )
            .add( ( as ) => {
                L( 'b2 run' );
                as.waitExternal();
                setImmediate( () => {
                    L( 'b2 raises E2' );
                    extError( as, 'E2' );
                } );
            }, eh( 'b2' ) );
        root.add( ( as, ...args ) => L( 'N run ' + A( args ) ) ).execute();
        setTimeout( () => L( '100 ms later' ), 100 );
    } ],
    [ 'b: b1 setTimeout(50) only (no cancel handler); b2 errors E2 from setImmediate', () => {
        const root = $as();
        root.parallel( eh( 'P' ) )
            .add( ( as ) => {
                L( 'b1 run' );
                as.setTimeout( 50 );
            }, eh( 'b1' ) )
            .add( ( as ) => {
                L( 'b2 run' );
                as.waitExternal();
                setImmediate( () => {
                    L( 'b2 raises E2' );
                    extError( as, 'E2' );
                } );
            }, eh( 'b2' ) );
        root.add( ( as, ...args ) => L( 'N run ' + A( args ) ) ).execute();
        setTimeout( () => L( '100 ms later' ), 100 );
    } ],
    [ 'c: b1 times out after 10 ms; b2 waits with setCancel; P onerror recovers', () => {
        const root = $as();
        root.parallel( ( as, err ) => {
            L( 'P onerror ' + err );
            as.success();
        } )
            .add( ( as ) => {
                L( 'b1 run' );
                as.setTimeout( 10 );
            }, eh( 'b1' ) )
            .add( ( as ) => {
                L( 'b2 run' );
                as.setCancel( ( as ) => L( 'b2 cancel' ) );
            }, eh( 'b2' ) );
        root.add( ( as, ...args ) => L( 'N run ' + A( args ) ) ).execute();
    } ],
    [ 'd: b1 sub-step waits with setTimeout(50) inside a branch; b2 errors; timer cleared?', () => {
        const root = $as();
        root.parallel( eh( 'P' ) )
            .add( ( as ) => {
                L( 'b1 run' );
                as.add( ( as ) => {
                    L( 'b1.1 run' );
                    as.setTimeout( 50 );
                }, eh( 'b1.1' ) );
            }, eh( 'b1' ) )
            .add( ( as ) => {
                L( 'b2 run' );
                as.waitExternal();
                setImmediate( () => {
                    L( 'b2 raises E2' );
                    extError( as, 'E2' );
                } );
            } );
        root.add( ( as, ...args ) => L( 'N run ' + A( args ) ) ).execute();
        setTimeout( () => L( '100 ms later' ), 100 );
    } ],
] );
