'use strict';
// Q10: successStep(), newInstance(), execute() with zero steps, cancel()
// after finish / before execute(), synchronous part of execute().
const { $as, L, A, scenarios } = require( './_harness' );
const N = ( as, ...args ) => L( 'N run ' + A( args ) );

scenarios( [
    [ 'a: step adds sub-step X (success(x)) then successStep(1,2)', () => {
        $as().add( ( as ) => {
            as.add( ( as ) => {
                L( 'X run' );
                as.success( 'x' );
            } );
            as.successStep( 1, 2 );
        } ).add( N ).execute();
    } ],
    [ 'b: step only calls successStep(1,2) (no sub-steps)', () => {
        $as().add( ( as ) => {
            as.successStep( 1, 2 );
        } ).add( N ).execute();
    } ],
    [ 'c: successStep(1) then add(Y printing its args)', () => {
        $as().add( ( as ) => {
            as.successStep( 1 );
            as.add( ( as, ...args ) => L( 'Y run ' + A( args ) ) );
        } ).add( N ).execute();
    } ],
    [ 'd: add(X) ; successStep(1) ; add(Y printing its args)', () => {
        $as().add( ( as ) => {
            as.add( ( as ) => L( 'X run' ) );
            as.successStep( 1 );
            as.add( ( as, ...args ) => L( 'Y run ' + A( args ) ) );
        } ).add( N ).execute();
    } ],
    [ 'e: root-level: root.add(S1) ; root.successStep(r) ; root.add(N)', () => {
        $as().add( ( as ) => L( 'S1 run' ) ).successStep( 'r' ).add( N ).execute();
    } ],
    [ 'f: root-level successStep(r) before any add, then add(N)', () => {
        $as().successStep( 'r' ).add( N ).execute();
    } ],
    [ 'g: successStep(1) then explicit success(2) in the same step', () => {
        $as().add( ( as ) => {
            as.successStep( 1 );
            as.success( 2 );
        } ).add( N ).execute();
    } ],
    [ 'h: newInstance(): independent root, own state, run from inside a step', () => {
        const root = $as();
        root.state().k = 'root';
        root.add( ( as ) => {
            const other = as.newInstance();
            L( 'other state k=' + other.state().k + ' same=' + ( other.state() === as.state() ) );
            other.add( ( as ) => L( 'other step run' ) );
            other.execute();
            L( 'step after other.execute()' );
        } ).add( N ).execute();
    } ],
    [ 'i: execute() with zero steps; then promise() with zero steps', () => {
        const root = $as();
        root.execute();
        L( 'execute returned' );
        $as().promise().then( ( r ) => L( 'promise resolved ' + r ), ( e ) => L( 'rejected ' + e.message ) );
    } ],
    [ 'j: cancel() on a finished root', () => {
        const root = $as();
        root.add( ( as ) => L( 'S run' ) ).add( N );
        root.execute();
        setImmediate( () => {
            root.cancel();
            L( 'cancel returned' );
        } );
    } ],
    [ 'k: cancel() before execute()', () => {
        const root = $as();
        root.add( ( as ) => L( 'S run' ) ).add( N );
        root.cancel();
        root.execute();
        L( 'execute returned' );
    } ],
    [ 'l: how much runs synchronously inside execute()', () => {
        const root = $as();
        root.add( ( as ) => L( 'S1 run' ) );
        root.add( ( as ) => {
            L( 'S2 run' );
            as.add( ( as ) => L( 'S2.1 run' ) );
        } );
        root.add( ( as ) => {
            L( 'S3 run (waits)' );
            as.waitExternal();
            setImmediate( () => as.success() );
        } );
        root.add( ( as ) => L( 'S4 run' ) );
        L( 'before execute' );
        root.execute();
        L( 'after execute' );
    } ],
    [ 'm: 150 trivial steps: where does execute() return?', () => {
        const root = $as();
        for ( let i = 0; i < 150; ++i ) {
            root.add( ( as ) => {
                if ( i === 0 || i === 98 || i === 99 || i === 100 || i === 149 ) L( 'step ' + i );
            } );
        }
        root.execute();
        L( 'execute returned' );
    } ],
    [ 'n: re-use: add steps to a finished root and execute() again', () => {
        const root = $as();
        root.add( ( as ) => L( 'first run' ) );
        root.execute();
        setImmediate( () => {
            root.add( ( as ) => L( 'second run' ) );
            root.execute();
        } );
    } ],
] );
