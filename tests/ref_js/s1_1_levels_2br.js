'use strict';
// Spec 1.1 Levels, variant: every parallel() has TWO branches. Branch K prints
// "Level N parallel #2 branch K" and adds one sub-step printing
// "Level N parallel #2 branch K sub". All steps complete synchronously.
const { $as, L } = require( './_harness' );
const par = ( as, lvl ) => {
    const p = as.parallel();
    for ( const k of [ 1, 2 ] ) {
        p.add( ( as ) => {
            L( `Level ${lvl} parallel #2 branch ${k}` );
            as.add( ( as ) => L( `Level ${lvl} parallel #2 branch ${k} sub` ) );
        } );
    }
};
const root = $as();
root.add( ( as ) => {
    L( 'Level 0 add #1' );
    as.add( ( as ) => {
        L( 'Level 1 add #1' );
        as.add( ( as ) => L( 'Level 2 add #1' ) );
        par( as, 2 );
        as.add( ( as ) => L( 'Level 2 add #3' ) );
    } );
    par( as, 1 );
    as.add( ( as ) => L( 'Level 1 add #3' ) );
} );
par( root, 0 );
root.add( ( as ) => L( 'Level 0 add #3' ) );
root.execute();
