'use strict';
// Spec 3.1 single-level steps; something = true
const { $as, L } = require( './_harness' );
const something = true;
const as = $as();
as.add(
    ( inner_as ) => {
        if ( something ) inner_as.success( 1, 2 );
        else inner_as.error( 'NotImplemented' );
    },
    ( inner_as, error ) => {
        L( 'externalError ' + error );
    }
).add(
    ( inner_as, res1, res2 ) => {
        L( 'externalSuccess ' + res1 + ' ' + res2 );
    }
);
as.execute();
