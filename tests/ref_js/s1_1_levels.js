'use strict';
// Spec 1.1 Levels. Every parallel() has exactly ONE branch; that branch prints
// the parallel step's name ("Level N parallel #2").
const { $as, L } = require( './_harness' );
const root = $as();
root.add( ( as ) => {
    L( 'Level 0 add #1' );
    as.add( ( as ) => {
        L( 'Level 1 add #1' );
        as.add( ( as ) => L( 'Level 2 add #1' ) );
        as.parallel().add( ( as ) => L( 'Level 2 parallel #2' ) );
        as.add( ( as ) => L( 'Level 2 add #3' ) );
    } );
    as.parallel().add( ( as ) => L( 'Level 1 parallel #2' ) );
    as.add( ( as ) => L( 'Level 1 add #3' ) );
} );
root.parallel().add( ( as ) => L( 'Level 0 parallel #2' ) );
root.add( ( as ) => L( 'Level 0 add #3' ) );
root.execute();
