'use strict';
// Q4: parallel() semantics.
const { $as, L, A, scenarios, extError } = require( './_harness' );
const eh = ( n, recover ) => ( as, err ) => {
    L( n + ' onerror ' + err );
    if ( recover ) as.success( ...( recover === true ? [] : [ recover ] ) );
};
const after = ( as, ...args ) => L( 'after parallel ' + A( args ) );

// branch k (1..3): prints "bK run <args>", adds sub-steps "bK.1" and "bK.2".
// async=true: each sub-step waits and completes from setImmediate.
// Sub-step bK.2 calls success('bK res').
const branch = ( k, async ) => ( as, ...args ) => {
    L( `b${k} run ` + A( args ) );
    for ( const s of [ 1, 2 ] ) {
        as.add( ( as, ...args ) => {
            L( `b${k}.${s} run ` + A( args ) );
            const res = s === 2 ? [ `b${k}res` ] : [];
            if ( async ) {
                as.waitExternal();
                setImmediate( () => as.success( ...res ) );
            } else {
                as.success( ...res );
            }
        } );
    }
};
const errLater = ( n, code ) => ( as ) => {
    L( n + ' run' );
    as.setCancel( ( as ) => L( n + ' cancel' ) );
    setImmediate( () => {
        L( n + ' raises ' + code );
        extError( as, code );
    } );
};
const waiter = ( n, sub ) => ( as ) => {
    L( n + ' run' );
    as.setCancel( ( as ) => L( n + ' cancel' ) );
    if ( sub ) {
        as.add( ( as ) => {
            L( n + '.1 run' );
            as.setCancel( ( as ) => L( n + '.1 cancel' ) );
        }, eh( n + '.1' ) );
    }
};

scenarios( [
    [ 'a: prev step success(x,y); 3 branches x 2 sub-steps, all synchronous', () => {
        const root = $as();
        root.add( ( as ) => as.success( 'x', 'y' ) );
        const p = root.parallel();
        for ( const k of [ 1, 2, 3 ] ) p.add( branch( k, false ) );
        root.add( after ).execute();
    } ],
    [ 'b: same but every sub-step completes from setImmediate', () => {
        const root = $as();
        root.add( ( as ) => as.success( 'x', 'y' ) );
        const p = root.parallel();
        for ( const k of [ 1, 2, 3 ] ) p.add( branch( k, true ) );
        root.add( after ).execute();
    } ],
    [ 'c: error order: b1 waits (cancel) with sub-step b1.1 (cancel), b2 waits (cancel), b3 errors later; all with onerror; P onerror; outer O onerror', () => {
        const root = $as();
        root.add( ( as ) => {
            L( 'O run' );
            as.parallel( eh( 'P' ) )
                .add( waiter( 'b1', true ), eh( 'b1' ) )
                .add( waiter( 'b2' ), eh( 'b2' ) )
                .add( errLater( 'b3', 'E3' ), eh( 'b3' ) );
        }, eh( 'O' ) );
        root.add( after ).execute();
    } ],
    [ 'd: as c, but P onerror calls success()', () => {
        const root = $as();
        root.add( ( as ) => {
            L( 'O run' );
            as.parallel( eh( 'P', true ) )
                .add( waiter( 'b1', true ), eh( 'b1' ) )
                .add( waiter( 'b2' ), eh( 'b2' ) )
                .add( errLater( 'b3', 'E3' ), eh( 'b3' ) );
            as.add( ( as, ...args ) => L( 'O step after parallel ' + A( args ) ) );
        }, eh( 'O' ) );
        root.add( after ).execute();
    } ],
    [ 'e: P onerror calls success(v) with an argument', () => {
        const root = $as();
        root.parallel( eh( 'P', 'v' ) )
            .add( errLater( 'b1', 'E1' ) );
        root.add( after ).execute();
    } ],
    [ 'f: b2 errors later, its own onerror calls success(rec2): only that branch recovers', () => {
        const root = $as();
        root.parallel( eh( 'P' ) )
            .add( branch( 1, true ) )
            .add( errLater( 'b2', 'E2' ), eh( 'b2', 'rec2' ) )
            .add( branch( 3, true ) );
        root.add( after ).execute();
    } ],
    [ 'g: b2 errors SYNCHRONOUSLY, its own onerror calls success(): recovers', () => {
        const root = $as();
        root.parallel( eh( 'P' ) )
            .add( branch( 1, false ) )
            .add( ( as ) => {
                L( 'b2 run' );
                as.error( 'E2' );
            }, eh( 'b2', true ) )
            .add( branch( 3, false ) );
        root.add( after ).execute();
    } ],
    [ 'h: REFERENCE BUG: b2 errors synchronously, no recovery anywhere in the branch', () => {
        const root = $as();
        root.parallel( eh( 'P' ) )
            .add( waiter( 'b1' ), eh( 'b1' ) )
            .add( ( as ) => {
                L( 'b2 run' );
                as.error( 'E2' );
            }, eh( 'b2' ) )
            .add( waiter( 'b3' ), eh( 'b3' ) );
        root.add( after ).execute();
    } ],
    [ 'i: empty parallel (no branches)', () => {
        const root = $as();
        root.add( ( as ) => as.success( 'x' ) );
        root.parallel( eh( 'P' ) );
        root.add( after ).execute();
    } ],
    [ 'j: two branches error later in the same turn (b1 then b2)', () => {
        const root = $as();
        root.parallel( eh( 'P' ) )
            .add( errLater( 'b1', 'E1' ), eh( 'b1' ) )
            .add( errLater( 'b2', 'E2' ), eh( 'b2' ) );
        root.add( after ).execute();
    } ],
    [ 'k: state() is shared: branches set state().r1/r2, step after prints them', () => {
        const root = $as();
        root.parallel()
            .add( ( as ) => {
                as.state().r1 = 'one';
            } )
            .add( ( as ) => {
                as.waitExternal();
                setImmediate( () => {
                    as.state().r2 = 'two';
                    as.success();
                } );
            } );
        root.add( ( as ) => L( 'after parallel r1=' + as.state().r1 + ' r2=' + as.state().r2 ) ).execute();
    } ],
] );
