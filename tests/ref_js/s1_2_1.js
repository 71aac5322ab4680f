'use strict';
// Spec 1.2.1 Steps in error handler, literally.
const { $as, L } = require( './_harness' );
const root = $as();
root.add(
    ( as ) => {
        L( 'Level 0 func' );
        as.add(
            ( as ) => {
                L( 'Level 1 func' );
                as.error( 'first' );
            },
            ( as, error ) => {
                L( 'Level 1 onerror: ' + error );
                as.add(
                    ( as ) => {
                        L( 'Level 2 func' );
                        as.error( 'second' );
                    },
                    ( as, error ) => {
                        L( 'Level 2 onerror: ' + error );
                    }
                );
            }
        );
    },
    ( as, error ) => {
        L( 'Level 0 onerror: ' + error );
    }
);
root.execute();
