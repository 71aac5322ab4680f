'use strict';
// Shared body of the spec 1.4 "parallel execution abort" scripts.
// mode: 'plain'   - no error handlers at all (as in the spec)
//       'onerror' - parallel(onerror) prints and returns silently;
//                   branch 1 also has its own onerror (to show it is NOT called on cancel)
//       'recover' - parallel(onerror) prints and calls as.success()
//       'sync'    - like 'plain' but branch 3 calls as.error() synchronously
//                   inside its step (the literal spec code) -> reference bug, see notes
const { $as, L, extError } = require( './_harness' );

module.exports = ( mode ) => {
    const root = $as();
    const onerror = ( mode === 'onerror' || mode === 'recover' )
        ? ( as, err ) => {
            L( 'parallel onerror: ' + err );
            if ( mode === 'recover' ) as.success();
        }
        : undefined;
    const b1err = ( mode === 'onerror' )
        ? ( as, err ) => L( 'branch 1 onerror: ' + err )
        : undefined;
    root.parallel( onerror )
        .add( ( as ) => {
            L( 'branch 1 start' );
            as.setCancel( ( as ) => L( 'branch 1 cancel' ) );
            as.state().result1 = 'r1';
        }, b1err )
        .add( ( as ) => {
            L( 'branch 2 start' );
            as.setCancel( ( as ) => L( 'branch 2 cancel' ) );
            as.state().result2 = 'r2';
        } )
        .add( ( as ) => {
            L( 'branch 3 start' );
            if ( mode === 'sync' ) {
                as.error( 'Some Error' );
            }
            as.waitExternal();
            setImmediate( () => {
                L( 'branch 3 raises Some Error' );
                extError( as, 'Some Error' );
            } );
        } );
    root.add( ( as ) => {
        L( 'final step: ' + as.state().result1 + ' ' + as.state().result2 );
        as.success();
    } );
    root.execute();
};
