'use strict';
// Spec 3.4 loops with state pre-populated before execute(): x='X', y='Y'.
const { $as, L } = require( './_harness' );
const root = $as();
root.state().x = 'X';
root.state().y = 'Y';
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
