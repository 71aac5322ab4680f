'use strict';
// Spec 1.3 wait for external resources.
// socket.read(cb) prints "socket.read"; depending on mode:
//   'data'    - from setImmediate prints "data arrives" and as.success('payload')
//   'error'   - from setImmediate prints "read fails" and as.error('ReadError') (exception swallowed)
//   'timeout' - never completes; the step's setTimeout(20) fires
// setCancel prints "socket.cancel_read". onerror prints "Timeout" when
// error == 'Timeout' else "Read Error". A following root step prints "next <args>".
const { $as, L, A, extError } = require( './_harness' );

module.exports = ( mode ) => {
    const socket = {
        read: ( cb ) => {
            L( 'socket.read' );
            if ( mode === 'data' ) setImmediate( () => {
                L( 'data arrives' );
                cb( null, 'payload' );
            } );
            if ( mode === 'error' ) setImmediate( () => {
                L( 'read fails' );
                cb( 'ReadError' );
            } );
        },
        cancel_read: () => L( 'socket.cancel_read' ),
    };
    const root = $as();
    root.add(
        ( as ) => {
            socket.read( ( err, data ) => {
                if ( err ) extError( as, err );
                else as.success( data );
            } );
            as.setCancel( ( as ) => socket.cancel_read() );
            as.setTimeout( 20 );
        },
        ( as, error ) => {
            if ( error === 'Timeout' ) L( 'Timeout' );
            else L( 'Read Error' );
        }
    );
    root.add( ( as, ...args ) => L( 'next ' + A( args ) ) );
    root.execute();
};
