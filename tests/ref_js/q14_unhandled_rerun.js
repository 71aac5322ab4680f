'use strict';
// Q14: what is left of a root after an error no handler took, when the
// root is executed again.
// a) level 0: step 1 prints "step 1" and calls as.error('MyError'); steps 2
//    and 3 print their names. No handlers. From setImmediate: prints
//    "execute again" and executes the root again.
// b) the same, but before executing again a step 4 is added (prints
//    "step 4").
// c) nested: step 1 adds 1.1 (prints, errors) and 1.2 (prints); a level-0
//    step 2 follows; executed again from setImmediate.
const { $as, L, scenarios } = require( './_harness' );

const build = () => {
    const root = $as();
    root.add( ( as ) => {
        L( 'step 1' );
        as.error( 'MyError' );
    } );
    root.add( ( as ) => L( 'step 2' ) );
    root.add( ( as ) => L( 'step 3' ) );
    return root;
};

scenarios( [
    [ 'a: executed again after an unhandled error', () => {
        const root = build();
        root.execute();
        setImmediate( () => {
            L( 'execute again' );
            root.execute();
        } );
    } ],
    [ 'b: a step added, then executed again', () => {
        const root = build();
        root.execute();
        setImmediate( () => {
            L( 'add step 4, execute again' );
            root.add( ( as ) => L( 'step 4' ) );
            root.execute();
        } );
    } ],
    [ 'c: an error in a sub-step, then executed again', () => {
        const root = $as();
        root.add( ( as ) => {
            L( 'step 1' );
            as.add( ( as ) => {
                L( 'step 1.1' );
                as.error( 'MyError' );
            } );
            as.add( ( as ) => L( 'step 1.2' ) );
        } );
        root.add( ( as ) => L( 'step 2' ) );
        root.execute();
        setImmediate( () => {
            L( 'execute again' );
            root.execute();
        } );
    } ],
] );
