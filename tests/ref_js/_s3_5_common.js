'use strict';
// Spec 3.5 external event wait.
// Step 1: prints "step 1", calls waitExternal(), then callSomeExternal(cb).
//   callSomeExternal prints "callSomeExternal" and calls cb(err) later, from
//   setImmediate (via='immediate') or from setTimeout(5 ms) (via='timer');
//   err = null (ok) or 'ExtError'. The callback prints
//   "external callback ok" / "external callback err=ExtError", then calls
//   as.success() / as.error(err) inside try { } catch { /* ignore */ } (as in the spec).
// withOnerror: step 1 has an error handler printing "step 1 onerror: <err>".
// Step 2 (always present): prints "step 2 args=<args>".
const { $as, L, A } = require( './_harness' );

module.exports = ( via, err, withOnerror ) => {
    const callSomeExternal = ( cb ) => {
        L( 'callSomeExternal' );
        if ( via === 'immediate' ) setImmediate( () => cb( err ) );
        else setTimeout( () => cb( err ), 5 );
    };
    const root = $as();
    root.add(
        ( as ) => {
            L( 'step 1' );
            as.waitExternal();
            callSomeExternal( ( err ) => {
                if ( err ) {
                    L( 'external callback err=' + err );
                    try {
                        as.error( err );
                    } catch ( e ) {
                        // ignore
                    }
                } else {
                    L( 'external callback ok' );
                    as.success();
                }
            } );
        },
        withOnerror ? ( as, e ) => L( 'step 1 onerror: ' + e ) : undefined
    );
    root.add( ( as, ...args ) => L( 'step 2 args=' + A( args ) ) );
    root.execute();
};
