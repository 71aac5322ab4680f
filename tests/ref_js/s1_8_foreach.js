'use strict';
// Spec 1.8 traverse a list: forEach(['apple','banana']) printing "<k> = <v>".
const { $as, L } = require( './_harness' );
const root = $as();
root.add( ( as ) => {
    as.forEach(
        [ 'apple', 'banana' ],
        ( as, k, v ) => {
            L( k + ' = ' + v );
        }
    );
} );
root.execute();
