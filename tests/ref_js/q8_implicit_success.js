'use strict';
// Q8: implicit success. Step S is preceded by a step doing success('p') and
// followed by step N printing "N run <args>". S has onerror printing
// "S onerror <err>". "release" = a setImmediate (or 40 ms timer) that prints
// "external success" and calls as.success('ext') on S.
const { $as, L, A, scenarios } = require( './_harness' );
const run = ( S ) => {
    $as()
        .add( ( as ) => as.success( 'p' ) )
        .add( S, ( as, err ) => L( 'S onerror ' + err ) )
        .add( ( as, ...args ) => L( 'N run ' + A( args ) ) )
        .execute();
};
const release = ( as, ms ) => {
    const f = () => {
        L( 'external success' );
        as.success( 'ext' );
    };
    if ( ms ) setTimeout( f, ms );
    else setImmediate( f );
};

scenarios( [
    [ 'a: S only calls setTimeout(20)', () => run( ( as, ...args ) => {
        L( 'S run ' + A( args ) );
        as.setTimeout( 20 );
    } ) ],
    [ 'b: S only calls setCancel(); released from setImmediate', () => run( ( as ) => {
        L( 'S run' );
        as.setCancel( ( as ) => L( 'S cancel' ) );
        release( as );
    } ) ],
    [ 'c: S only calls setCancel(); never released', () => run( ( as ) => {
        L( 'S run' );
        as.setCancel( ( as ) => L( 'S cancel' ) );
    } ) ],
    [ 'd: S only calls waitExternal(); released from setImmediate', () => run( ( as ) => {
        L( 'S run' );
        as.waitExternal();
        release( as );
    } ) ],
    [ 'e: S does nothing (args from previous step are not forwarded)', () => run( ( as, ...args ) => {
        L( 'S run ' + A( args ) );
    } ) ],
    [ 'f: S calls setTimeout(100) and is released after 10 ms (timer cleared)', () => run( ( as ) => {
        L( 'S run' );
        as.setTimeout( 100 );
        release( as, 10 );
    } ) ],
    [ 'g: S adds a sub-step that does nothing -> S completes when sub-step completes', () => run( ( as ) => {
        L( 'S run' );
        as.add( ( as, ...args ) => L( 'sub run ' + A( args ) ) );
    } ) ],
    [ 'h: S sets setCancel() AND adds a sub-step -> completes after the sub-step (no wait)', () => run( ( as ) => {
        L( 'S run' );
        as.setCancel( ( as ) => L( 'S cancel' ) );
        as.add( ( as ) => {
            L( 'sub run' );
            as.success( 'fromSub' );
        } );
    } ) ],
    [ 'i: S calls waitExternal() then success(v) synchronously', () => run( ( as ) => {
        L( 'S run' );
        as.waitExternal();
        as.success( 'v' );
    } ) ],
    [ 'j: S calls setTimeout(20) then success(v) synchronously (timer cleared)', () => run( ( as ) => {
        L( 'S run' );
        as.setTimeout( 20 );
        as.success( 'v' );
    } ) ],
] );
