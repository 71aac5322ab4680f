'use strict';
// What happens when an error is not handled by any error handler.
// a) execute(): step 1 prints "step 1", adds sub-step 1.1 which prints
//    "step 1.1" and calls as.error('MyError', 'my info'); step 2 prints
//    "step 2". No handlers anywhere. A setImmediate scheduled after execute()
//    prints "after: error_info=<> last_exception=<message>".
// b) the same steps run via root.promise(): prints "promise resolved" or
//    "promise rejected: <message>".
// c) error() called from an external callback (setImmediate) WITHOUT try/catch,
//    no handlers: the exception propagates to the external caller; caught here
//    with process.on('uncaughtException') printing "uncaughtException: <message>".
const { $as, L, scenarios } = require( './_harness' );

const build = () => {
    const root = $as();
    root.add( ( as ) => {
        L( 'step 1' );
        as.add( ( as ) => {
            L( 'step 1.1' );
            as.error( 'MyError', 'my info' );
        } );
    } );
    root.add( ( as ) => L( 'step 2' ) );
    return root;
};

scenarios( [
    [ 'a_execute', () => {
        const root = build();
        root.execute();
        setImmediate( () => L( 'after: error_info=' + root.state().error_info +
            ' last_exception=' + root.state().last_exception.message ) );
    } ],
    [ 'b_promise', () => {
        build().promise().then(
            () => L( 'promise resolved' ),
            ( e ) => L( 'promise rejected: ' + e.message )
        );
    } ],
    [ 'c_external_error_uncaught', () => {
        process.once( 'uncaughtException', ( e ) => L( 'uncaughtException: ' + e.message ) );
        const root = $as();
        root.add( ( as ) => {
            L( 'step 1' );
            as.waitExternal();
            setImmediate( () => {
                L( 'external calls as.error(ExtError)' );
                as.error( 'ExtError' );
                L( 'not reached' );
            } );
        } );
        root.add( ( as ) => L( 'step 2' ) );
        root.execute();
    } ],
] );
