'use strict';
// Spec 1.8 loop n times: repeat(3) printing "Iteration: <i>".
const { $as, L } = require( './_harness' );
const root = $as();
root.add( ( as ) => {
    as.repeat( 3, ( as, i ) => {
        L( 'Iteration: ' + i );
    } );
} );
root.execute();
