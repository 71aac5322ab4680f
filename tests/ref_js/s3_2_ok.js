'use strict';
// Spec 3.2 sub-steps; something = true
const { $as, L } = require( './_harness' );
const something = true;
const as = $as();
as.add(
    ( inner_as ) => {
        inner_as.add(
            ( inner2_as ) => {
                if ( something ) inner2_as.success( 1 );
                else inner2_as.error( 'NotImplemented' );
            },
            ( inner2_as, error ) => {
                L( 'Spotted error ' + error );
                // continue with higher level error handlers
            }
        );
        inner_as.add(
            ( inner2_as, res1 ) => {
                inner2_as.success( res1, 2 );
            }
        );
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
