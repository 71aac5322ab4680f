'use strict';
// Q7: misuse. Common frame: wrapper step W (onerror prints "W onerror <err>
// error_info=<>") containing the misbehaving step S (onerror prints
// "S onerror <err> error_info=<>"), then a sibling step S2 inside W printing
// "S2 run <args>", then root step N printing "N run <args>".
// Exceptions that escape to the script are printed as "caught <message>".
const { $as, L, A, scenarios } = require( './_harness' );
const ei = ( as ) => ' error_info=' + as.state().error_info;
const frame = ( S, root = $as() ) => {
    root.add( ( as ) => {
        as.add( S, ( as, err ) => L( 'S onerror ' + err + ei( as ) ) );
        as.add( ( as, ...args ) => L( 'S2 run ' + A( args ) ) );
    }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) );
    root.add( ( as, ...args ) => L( 'N run ' + A( args ) ) );
    return root;
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
    [ 'a: success(1) twice in one step', () => {
        frame( ( as ) => {
            as.success( 1 );
            tryIt( 'second success(2)', () => as.success( 2 ) );
        } ).execute();
    } ],
    [ 'a2: success(1) twice, the exception of the second call NOT caught in the step', () => {
        frame( ( as ) => {
            as.success( 1 );
            as.success( 2 );
        } ).execute();
    } ],
    [ 'b: add() then success() in the same step', () => {
        frame( ( as ) => {
            as.add( ( as ) => L( 'sub run' ) );
            as.success( 1 );
        } ).execute();
    } ],
    [ 'c: success(1) then error(E) in the same step', () => {
        frame( ( as ) => {
            as.success( 1 );
            tryIt( 'error(E)', () => as.error( 'E' ) );
        } ).execute();
    } ],
    [ 'c2: success(1) then error(E), exception NOT caught in the step', () => {
        frame( ( as ) => {
            as.success( 1 );
            as.error( 'E' );
        } ).execute();
    } ],
    [ 'd: success(1) then add()', () => {
        frame( ( as ) => {
            as.success( 1 );
            tryIt( 'add()', () => as.add( ( as ) => L( 'late sub run' ) ) );
        } ).execute();
    } ],
    [ 'e: success(1) then setTimeout(10)', () => {
        frame( ( as ) => {
            as.success( 1 );
            tryIt( 'setTimeout(10)', () => as.setTimeout( 10 ) );
        } ).execute();
    } ],
    [ 'f: success(1) then setCancel()', () => {
        frame( ( as ) => {
            as.success( 1 );
            tryIt( 'setCancel()', () => as.setCancel( ( as ) => L( 'late cancel called' ) ) );
        } ).execute();
    } ],
    [ 'g: success(1) again from a later setImmediate after the step completed', () => {
        frame( ( as ) => {
            as.success( 1 );
            setImmediate( () => tryIt( 'late success(2)', () => as.success( 2 ) ) );
        } ).execute();
    } ],
    [ 'h: error(E) from a later setImmediate after the step completed', () => {
        frame( ( as ) => {
            as.success( 1 );
            setImmediate( () => tryIt( 'late error(E)', () => as.error( 'E' ) ) );
        } ).execute();
    } ],
    [ 'i: execute() called a second time while the root waits, then success', () => {
        const root = frame( ( as ) => {
            L( 'S run' );
            as.waitExternal();
            setImmediate( () => {
                tryIt( 'second execute()', () => root.execute() );
                as.success( 1 );
            } );
        } );
        root.execute();
    } ],
    [ 'j: execute() called again after the root finished', () => {
        const root = frame( ( as ) => L( 'S run' ) );
        root.execute();
        setImmediate( () => tryIt( 'execute() after finish', () => root.execute() ) );
    } ],
    [ 'k: root.add() from outside while the root waits', () => {
        const root = frame( ( as ) => {
            L( 'S run' );
            as.setCancel( ( as ) => L( 'S cancel' ) );
            setImmediate( () => tryIt( 'root.add()', () => root.add( ( as ) => L( 'late root step' ) ) ) );
        } );
        root.execute();
    } ],
    [ 'l: inner as.add() on a parent step\'s as from inside a sub-step (wrong level)', () => {
        $as().add( ( as ) => {
            const parent = as;
            as.add( ( as ) => {
                tryIt( 'parent.add()', () => parent.add( ( as ) => L( 'wrong-level step run' ) ) );
            }, ( as, err ) => L( 'sub onerror ' + err + ei( as ) ) );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( ( as, ...args ) => L( 'N run ' + A( args ) ) ).execute();
    } ],
    [ 'l2: same as l, exception NOT caught', () => {
        $as().add( ( as ) => {
            const parent = as;
            as.add( ( as ) => {
                parent.add( ( as ) => L( 'wrong-level step run' ) );
            }, ( as, err ) => L( 'sub onerror ' + err + ei( as ) ) );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( ( as, ...args ) => L( 'N run ' + A( args ) ) ).execute();
    } ],
    [ 'm: success() inside own cancel handler during root.cancel()', () => {
        const root = frame( ( as ) => {
            L( 'S run' );
            as.setCancel( ( as ) => {
                L( 'S cancel' );
                tryIt( 'success() in cancel', () => as.success() );
            } );
            setImmediate( () => root.cancel() );
        } );
        root.execute();
    } ],
] );
