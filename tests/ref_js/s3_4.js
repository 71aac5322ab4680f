'use strict';
// Spec 3.4 loops, literally. Nothing was stored in state() before, so the
// third loop (over state()) iterates over the state keys existing at that time.
const { $as, L } = require( './_harness' );
const root = $as();
root.add( ( as ) => {
    as.repeat( 3, ( as, i ) => {
        L( i );
    } );
    as.forEach( [ 1, 3, 3 ], ( as, k, v ) => {
        L( k + '=' + v );
    } );
    as.forEach( as.state(), ( as, k, v ) => {
        L( k + '=' + v );
    } );
} );
root.execute();
