'use strict';
// Q1: error unwinding through a frame that has a cancel handler.
// Common shape: root step W (only in b) -> step A: prints "A run",
// as.setCancel(print "A cancel"), adds sub-step B; B prints "B run" and
// calls as.error('BErr'). Root step C after A prints "C run <args>".
const { $as, L, A, scenarios, extError } = require( './_harness' );

const stepA = ( opts ) => ( as ) => {
    L( 'A run' );
    as.setCancel( ( as ) => L( 'A cancel' ) );
    as.add(
        ( as ) => {
            L( 'B run' );
            as.error( 'BErr' );
        },
        opts.bOnerror ? ( as, err ) => L( 'B onerror ' + err ) : undefined
    );
};
const aOnerror = ( recover ) => ( as, err ) => {
    L( 'A onerror ' + err );
    if ( recover ) as.success( 'recA' );
};
const stepC = ( as, ...args ) => L( 'C run ' + A( args ) );

scenarios( [
    [ 'a: A has cancel + onerror (silent), B errors', () => {
        $as().add( stepA( {} ), aOnerror( false ) ).add( stepC ).execute();
    } ],
    [ 'b: A has cancel, no onerror; outer step W has onerror', () => {
        $as().add(
            ( as ) => {
                L( 'W run' );
                as.add( stepA( {} ) );
            },
            ( as, err ) => L( 'W onerror ' + err )
        ).add( stepC ).execute();
    } ],
    [ 'c: B has onerror (silent) too', () => {
        $as().add( stepA( { bOnerror: true } ), aOnerror( false ) ).add( stepC ).execute();
    } ],
    [ 'd: A onerror calls success(recA)', () => {
        $as().add( stepA( {} ), aOnerror( true ) ).add( stepC ).execute();
    } ],
    [ 'e: step S sets cancel then errors itself synchronously', () => {
        $as().add(
            ( as ) => {
                L( 'S run' );
                as.setCancel( ( as ) => L( 'S cancel' ) );
                as.error( 'SErr' );
            },
            ( as, err ) => L( 'S onerror ' + err )
        ).execute();
    } ],
    [ 'f: step S sets cancel, errors later from setImmediate', () => {
        $as().add(
            ( as ) => {
                L( 'S run' );
                as.setCancel( ( as ) => L( 'S cancel' ) );
                setImmediate( () => extError( as, 'SErr' ) );
            },
            ( as, err ) => L( 'S onerror ' + err )
        ).execute();
    } ],
    [ 'g: A has cancel, B succeeds (no error): is A cancel called? does A complete?', () => {
        $as().add(
            ( as ) => {
                L( 'A run' );
                as.setCancel( ( as ) => L( 'A cancel' ) );
                as.add( ( as ) => {
                    L( 'B run' );
                    as.success( 'fromB' );
                } );
            },
            ( as, err ) => L( 'A onerror ' + err )
        ).add( stepC ).execute();
    } ],
    [ 'h: A cancel handler, error deeper (B -> B1 errors), B has cancel too', () => {
        $as().add(
            ( as ) => {
                L( 'A run' );
                as.setCancel( ( as ) => L( 'A cancel' ) );
                as.add(
                    ( as ) => {
                        L( 'B run' );
                        as.setCancel( ( as ) => L( 'B cancel' ) );
                        as.add( ( as ) => {
                            L( 'B1 run' );
                            as.error( 'B1Err' );
                        } );
                    },
                    ( as, err ) => L( 'B onerror ' + err )
                );
            },
            ( as, err ) => L( 'A onerror ' + err )
        ).add( stepC ).execute();
    } ],
] );
