'use strict';
// Q2: setTimeout on a step that has sub-steps.
const { $as, L, A, scenarios } = require( './_harness' );
const eh = ( name, recover ) => ( as, err ) => {
    L( name + ' onerror ' + err + ' error_info=' + as.state().error_info +
        ' last_exception=' + ( as.state().last_exception && as.state().last_exception.message ) );
    if ( recover ) as.success( 'rec' + name );
};
const stepC = ( as, ...args ) => L( 'C run ' + A( args ) );

scenarios( [
    [ 'a: T setTimeout(20) + sub-step S waits (setCancel); T and S have onerror', () => {
        $as().add(
            ( as ) => {
                L( 'T run' );
                as.setTimeout( 20 );
                as.add( ( as ) => {
                    L( 'S run' );
                    as.setCancel( ( as ) => L( 'S cancel' ) );
                }, eh( 'S' ) );
            },
            eh( 'T' )
        ).add( stepC ).execute();
    } ],
    [ 'b: same, T also has setCancel; S -> S1 nested, both with cancel; no onerror on S/S1', () => {
        $as().add(
            ( as ) => {
                L( 'T run' );
                as.setTimeout( 20 );
                as.setCancel( ( as ) => L( 'T cancel' ) );
                as.add( ( as ) => {
                    L( 'S run' );
                    as.setCancel( ( as ) => L( 'S cancel' ) );
                    as.add( ( as ) => {
                        L( 'S1 run' );
                        as.setCancel( ( as ) => L( 'S1 cancel' ) );
                    } );
                } );
            },
            eh( 'T' )
        ).add( stepC ).execute();
    } ],
    [ 'c: T setTimeout(20); sub-step S completes via setImmediate success(s) -> timer cleared', () => {
        $as().add(
            ( as ) => {
                L( 'T run' );
                as.setTimeout( 20 );
                as.add( ( as ) => {
                    L( 'S run' );
                    as.waitExternal();
                    setImmediate( () => as.success( 's' ) );
                } );
            },
            eh( 'T' )
        ).add( stepC ).execute();
    } ],
    [ 'd: as a, but T onerror calls success(recT)', () => {
        $as().add(
            ( as ) => {
                L( 'T run' );
                as.setTimeout( 20 );
                as.add( ( as ) => {
                    L( 'S run' );
                    as.setCancel( ( as ) => L( 'S cancel' ) );
                }, eh( 'S' ) );
            },
            eh( 'T', true )
        ).add( stepC ).execute();
    } ],
    [ 'e: as a, but S onerror calls success(recS)', () => {
        $as().add(
            ( as ) => {
                L( 'T run' );
                as.setTimeout( 20 );
                as.add( ( as ) => {
                    L( 'S run' );
                    as.setCancel( ( as ) => L( 'S cancel' ) );
                }, eh( 'S', true ) );
                as.add( ( as, ...args ) => L( 'S2 run ' + A( args ) ) );
            },
            eh( 'T' )
        ).add( stepC ).execute();
    } ],
    [ 'f: T setTimeout(20) containing a parallel with 2 waiting branches (setCancel)', () => {
        $as().add(
            ( as ) => {
                L( 'T run' );
                as.setTimeout( 20 );
                as.parallel( eh( 'P' ) )
                    .add( ( as ) => {
                        L( 'b1 run' );
                        as.setCancel( ( as ) => L( 'b1 cancel' ) );
                    }, eh( 'b1' ) )
                    .add( ( as ) => {
                        L( 'b2 run' );
                        as.setCancel( ( as ) => L( 'b2 cancel' ) );
                    }, eh( 'b2' ) );
            },
            eh( 'T' )
        ).add( stepC ).execute();
    } ],
    [ 'g: plain step setTimeout(20) and nothing else, with onerror', () => {
        $as().add(
            ( as ) => {
                L( 'T run' );
                as.setTimeout( 20 );
            },
            eh( 'T' )
        ).add( stepC ).execute();
    } ],
] );
