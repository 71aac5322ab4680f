'use strict';
// Spec 1.2 Error handling, literally.
const { $as, L } = require( './_harness' );
const root = $as();
root.add(
    ( as ) => {
        L( 'Level 0 func' );
        as.add(
            ( as ) => {
                L( 'Level 1 func' );
                as.error( 'myerror' );
            },
            ( as, error ) => {
                L( 'Level 1 onerror: ' + error );
                as.error( 'newerror' );
            }
        );
    },
    ( as, error ) => {
        L( 'Level 0 onerror: ' + error );
        as.success( 'Prm' );
    }
);
root.add( ( as, param ) => {
    L( 'Level 0 func2: ' + param );
    as.success();
} );
root.execute();
