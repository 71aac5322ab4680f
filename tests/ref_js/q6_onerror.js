'use strict';
// Q6: error handler behaviours.
// Common: step F prints "F run" and calls as.error('E1', 'info1'); step N
// after it prints "N run <args> error_info=<>". Outer handlers print
// "<name> onerror <err> error_info=<state().error_info>".
const { $as, L, A, scenarios } = require( './_harness' );
const ei = ( as ) => ' error_info=' + as.state().error_info;
const N = ( as, ...args ) => L( 'N run ' + A( args ) + ei( as ) );
const F = ( as ) => {
    L( 'F run' );
    as.error( 'E1', 'info1' );
};

scenarios( [
    [ 'a: F onerror calls success(a,b)', () => {
        $as().add( F, ( as, err ) => {
            L( 'F onerror ' + err + ei( as ) );
            as.success( 'a', 'b' );
        } ).add( N ).execute();
    } ],
    [ 'b: F onerror calls error(E2, info2); wrapping step W onerror prints', () => {
        $as().add( ( as ) => {
            as.add( F, ( as, err ) => {
                L( 'F onerror ' + err + ei( as ) );
                as.error( 'E2', 'info2' );
            } );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( N ).execute();
    } ],
    [ 'c: F onerror calls error(E2) without info', () => {
        $as().add( ( as ) => {
            as.add( F, ( as, err ) => {
                L( 'F onerror ' + err + ei( as ) );
                as.error( 'E2' );
            } );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( N ).execute();
    } ],
    [ 'd: F onerror adds X (success(fromX)) and Y (prints args, success(fromY))', () => {
        $as().add( F, ( as, err ) => {
            L( 'F onerror ' + err );
            as.add( ( as, ...args ) => {
                L( 'X run ' + A( args ) );
                as.success( 'fromX' );
            } );
            as.add( ( as, ...args ) => {
                L( 'Y run ' + A( args ) );
                as.success( 'fromY' );
            } );
        } ).add( N ).execute();
    } ],
    [ 'e: F onerror adds X which errors E3; F onerror NOT re-run; W gets E3', () => {
        $as().add( ( as ) => {
            as.add( F, ( as, err ) => {
                L( 'F onerror ' + err );
                as.add( ( as ) => {
                    L( 'X run' );
                    as.error( 'E3' );
                } );
            } );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( N ).execute();
    } ],
    [ 'f: F onerror returns silently; W onerror gets E1; N does not run', () => {
        $as().add( ( as ) => {
            as.add( F, ( as, err ) => L( 'F onerror ' + err ) );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( N ).execute();
    } ],
    [ 'g: handler selects by code: recovers E1 only, converts others to Other', () => {
        const sel = ( as, err ) => {
            L( 'F onerror ' + err );
            if ( err === 'E1' ) as.success( 'recovered' );
            else as.error( 'Other' );
        };
        $as().add( ( as ) => {
            as.add( F, sel );
            as.add( ( as, ...args ) => {
                L( 'G run ' + A( args ) );
                as.error( 'E9' );
            }, sel );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( N ).execute();
    } ],
    [ 'h: recovery at a sub-level continues with the failed step\'s next sibling', () => {
        $as().add( ( as ) => {
            L( 'P run' );
            as.add( F, ( as, err ) => as.success( 'r' ) );
            as.add( ( as, ...args ) => {
                L( 'S2 run ' + A( args ) );
                as.success( 's2' );
            } );
        } ).add( N ).execute();
    } ],
    [ 'i: F onerror adds a step AND calls success() -> ?', () => {
        $as().add( ( as ) => {
            as.add( F, ( as, err ) => {
                L( 'F onerror ' + err );
                as.add( ( as ) => L( 'X run' ) );
                as.success( 'z' );
            } );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( N ).execute();
    } ],
    [ 'j: F onerror calls success(a) then error(E2) -> ?', () => {
        const root = $as();
        setImmediate( () => L( 'later: last_exception=' + root.state().last_exception.message + ei( root ) ) );
        root.add( ( as ) => {
            as.add( F, ( as, err ) => {
                L( 'F onerror ' + err );
                as.success( 'a' );
                L( 'F onerror after success' );
                as.error( 'E2' );
            } );
        }, ( as, err ) => L( 'W onerror ' + err + ei( as ) ) ).add( N ).execute();
    } ],
    [ 'k: error thrown as a plain JS exception (throw new Error("Boom")) in a step', () => {
        $as().add( ( as ) => {
            L( 'F run' );
            throw new Error( 'Boom' );
        }, ( as, err ) => L( 'F onerror ' + err + ei( as ) + ' last_exception=' + as.state().last_exception.message ) ).add( N ).execute();
    } ],
    [ 'l: error handler that throws E2 via error() in a handler added in an onerror-added step', () => {
        // like spec 1.2.1 but the handler of the added step recovers
        $as().add( ( as ) => {
            as.add( F, ( as, err ) => {
                L( 'F onerror ' + err );
                as.add( ( as ) => {
                    L( 'X run' );
                    as.error( 'E3' );
                }, ( as, err ) => {
                    L( 'X onerror ' + err );
                    as.success( 'fromXerr' );
                } );
            } );
            as.add( ( as, ...args ) => L( 'S2 run ' + A( args ) ) );
        }, ( as, err ) => L( 'W onerror ' + err ) ).add( N ).execute();
    } ],
] );
