'use strict';
// Spec 1.8 inner loops and identifiers. Outer loop labelled "OUTER".
// Outer body: prints "outer <o>" (o = 0,1,2,3); at o == 3 calls as.break()
// (added so that the example terminates). Then an inner (unlabelled) loop whose
// body calls call_some_library(as): adds a step printing
// "call_some_library <o>.<i>" (i = 0,1,2 per outer iteration) and calling
// success(i < 2); then a step printing "result <result>" that calls
// as.continue("OUTER") when result is false, else as.success(result).
// After the inner loop the outer body adds a step printing "use <result>" then
// success() - it is never reached, because the inner loop only ends via continue("OUTER").
// A root step after the loop step prints "after loop <args>".
const { $as, L, A } = require( './_harness' );
let o = 0;
const root = $as();
root.add( ( as ) => {
    as.loop(
        ( as ) => {
            const oi = o++;
            let i = 0;
            L( 'outer ' + oi );
            if ( oi === 3 ) as.break();
            as.loop( ( as ) => {
                as.add( ( as ) => {
                    const ii = i++;
                    L( 'call_some_library ' + oi + '.' + ii );
                    as.success( ii < 2 );
                } );
                as.add( ( as, result ) => {
                    L( 'result ' + result );
                    if ( !result ) {
                        as.continue( 'OUTER' );
                    }
                    as.success( result );
                } );
            } );
            as.add( ( as, result ) => {
                L( 'use ' + result );
                as.success();
            } );
        },
        'OUTER'
    );
} );
root.add( ( as, ...args ) => L( 'after loop ' + A( args ) ) );
root.execute();
