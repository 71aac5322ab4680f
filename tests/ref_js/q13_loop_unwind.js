'use strict';
// Q13: breakLoop()/continueLoop() unwind like errors (LoopBreak / LoopCont):
// error handlers between the step that breaks and its loop see the code,
// success() there swallows it, error() replaces it, add() replaces the
// handler; cancel handlers run first; once the loop is reached it ends (or
// goes on) and last_exception / error_info read as null again.
// st() prints last_exception as its code (or null) and error_info (or null).
const { $as, L, A, scenarios } = require( './_harness' );
const st = ( as ) => {
    const e = as.state().last_exception;
    const i = as.state().error_info;
    return ' last_exception=' + ( e ? ( e.message || String( e ) ) : 'null' ) +
        ' error_info=' + ( i === undefined || i === null ? 'null' : i );
};

scenarios( [
    [ 'a: a break passes an intermediate handler', () => {
        const r = $as();
        r.loop( ( as ) => {
            as.add( ( as ) => {
                as.add( ( as ) => { L( 'body' ); as.break(); } );
            }, ( as, err ) => L( 'mid onerror ' + err + st( as ) ) );
        } );
        r.add( ( as ) => L( 'after loop' + st( as ) ) );
        r.execute();
    } ],
    [ 'b: the breaking step sees its own break', () => {
        const r = $as();
        r.loop( ( as ) => {
            as.add( ( as ) => { L( 'body' ); as.break(); },
                ( as, err ) => L( 'own onerror ' + err ) );
        } );
        r.add( ( as ) => L( 'after loop' + st( as ) ) );
        r.execute();
    } ],
    [ 'c: success() in a handler swallows a break', () => {
        const r = $as();
        let i = 0;
        r.loop( ( as ) => {
            as.add( ( as ) => { L( 'body ' + i ); ++i; as.break(); },
                ( as, err ) => {
                    L( 'onerror ' + err );
                    if ( i < 3 ) {
                        as.success();
                    }
                } );
            as.add( ( as ) => L( 'swallowed, iteration goes on' ) );
        } );
        r.add( ( as ) => L( 'after loop' + st( as ) ) );
        r.execute();
    } ],
    [ 'd: continue passes a handler on every iteration', () => {
        const r = $as();
        r.repeat( 3, ( as, n ) => {
            as.add( ( as ) => { L( 'body ' + n ); as.continue(); },
                ( as, err ) => L( 'onerror ' + err ) );
            as.add( ( as ) => L( 'not reached ' + n ) );
        } );
        r.add( ( as ) => L( 'after repeat' + st( as ) ) );
        r.execute();
    } ],
    [ 'e: success(v) in a handler swallows a continue', () => {
        const r = $as();
        r.repeat( 2, ( as, n ) => {
            as.add( ( as ) => { L( 'body ' + n ); as.continue(); },
                ( as, err ) => { L( 'onerror ' + err ); as.success( 'v' ); } );
            as.add( ( as, ...a ) => L( 'next ' + n + ' ' + A( a ) ) );
        } );
        r.add( ( as ) => L( 'after repeat' ) );
        r.execute();
    } ],
    [ 'f: a labelled break passes the inner loop', () => {
        const r = $as();
        r.loop( ( as ) => {
            as.add( ( as ) => {
                as.loop( ( as ) => {
                    as.add( ( as ) => { L( 'inner' ); as.break( 'OUTER' ); },
                        ( as, err ) => L( 'inner onerror ' + err ) );
                }, 'INNER' );
            }, ( as, err ) => L( 'between onerror ' + err ) );
        }, 'OUTER' );
        r.add( ( as ) => L( 'after' + st( as ) ) );
        r.execute();
    } ],
    [ 'g: a handler turns a break into an error', () => {
        const r = $as();
        r.add( ( as ) => {
            as.loop( ( as ) => {
                as.add( ( as ) => { as.break(); },
                    ( as, err ) => { L( 'onerror ' + err ); as.error( 'Changed' ); } );
            } );
        }, ( as, err ) => L( 'outer onerror ' + err + st( as ) ) );
        r.execute();
    } ],
    [ 'h: a break from an error handler passes the next handler', () => {
        const r = $as();
        r.loop( ( as ) => {
            as.add( ( as ) => {
                as.add( ( as ) => { as.error( 'E1', 'info1' ); },
                    ( as, err ) => { L( 'onerror ' + err + st( as ) ); as.break(); } );
            }, ( as, err ) => L( 'mid onerror ' + err + st( as ) ) );
        } );
        r.add( ( as ) => L( 'after' + st( as ) ) );
        r.execute();
    } ],
    [ 'i: add() in a handler replaces a break', () => {
        const r = $as();
        let i = 0;
        r.loop( ( as ) => {
            L( 'iteration ' + i );
            if ( i++ > 1 ) {
                as.break();
                return;
            }
            as.add( ( as ) => { as.break(); },
                ( as, err ) => { L( 'onerror ' + err ); as.add( ( as ) => L( 'added by the handler' ) ); } );
        } );
        r.add( ( as ) => L( 'after' + st( as ) ) );
        r.execute();
    } ],
    [ 'j: cancel handlers run before the handlers that see the break', () => {
        const r = $as();
        r.loop( ( as ) => {
            as.add( ( as ) => {
                as.setCancel( ( as ) => L( 'cancel mid' ) );
                as.add( ( as ) => { as.break(); } );
            }, ( as, err ) => L( 'mid onerror ' + err ) );
        } );
        r.add( ( as, ...a ) => L( 'after ' + A( a ) ) );
        r.execute();
    } ],
    [ 'k: a handled error before the loop, then a break', () => {
        const r = $as();
        r.add( ( as ) => { as.error( 'Prior', 'pinfo' ); },
            ( as, err ) => { L( 'onerror ' + err + st( as ) ); as.success(); } );
        r.loop( ( as ) => { as.break(); } );
        r.add( ( as ) => L( 'after' + st( as ) ) );
        r.execute();
    } ],
] );
