'use strict';
// Spec 3.3 parallel() steps and state().
// fail: 0 - both branches succeed synchronously (literal spec)
//       1 - branch 1 fails with NotImplemented (raised from setImmediate, after waitExternal)
//       2 - branch 2 fails with NotImplemented (raised from setImmediate, after waitExternal)
// Errors are raised asynchronously because the reference swallows a
// synchronous error in a parallel branch (see REFERENCE-NOTES.md, Q4).
// Branch 2's error handler additionally prints "parallel_2 onerror <err>".
const { $as, L, extError } = require( './_harness' );

module.exports = ( fail ) => {
    const as = $as();
    const failLater = ( inner2_as ) => {
        inner2_as.waitExternal();
        setImmediate( () => extError( inner2_as, 'NotImplemented' ) );
    };
    as.add(
        ( inner_as ) => {
            inner_as.parallel().add(
                ( inner2_as ) => {
                    if ( fail === 1 ) return failLater( inner2_as );
                    inner2_as.state().parallel_1 = 1;
                },
                ( inner2_as, error ) => {
                    L( 'Spotted error ' + error );
                    // continue with higher level error handlers
                }
            ).add(
                ( inner2_as ) => {
                    if ( fail === 2 ) return failLater( inner2_as );
                    inner2_as.state().parallel_2 = 2;
                },
                ( inner2_as, error ) => {
                    L( 'parallel_2 onerror ' + error );
                    inner2_as.state().parallel_2 = 0;
                    // ignore error
                }
            );
        },
        ( inner_as, error ) => {
            L( 'externalError ' + error );
        }
    ).add(
        ( inner_as, res1, res2 ) => {
            L( 'externalSuccess ' + as.state().parallel_1 + ' ' + as.state().parallel_2 );
        }
    );
    as.execute();
};
