'use strict';
// Q3: root.cancel() while nested 3 levels deep.
// L0 step: prints "L0 run", setCancel(print "L0 cancel"), onerror prints, adds L1;
// L1 same, adds L2; L2 same but waits (its setCancel). A root step "next" follows L0.
// The cancel is issued from setImmediate: prints "calling cancel", root.cancel(),
// prints "cancel returned".
const { $as, L, scenarios } = require( './_harness' );

const eh = ( n ) => ( as, err ) => L( n + ' onerror ' + err );
const level = ( n, inner, extra ) => ( as ) => {
    L( 'L' + n + ' run' );
    as.setCancel( ( as ) => L( 'L' + n + ' cancel' ) );
    if ( extra ) extra( as );
    if ( inner ) as.add( inner, eh( 'L' + ( n + 1 ) ) );
};
const build = ( l2extra ) => {
    const root = $as();
    root.add(
        level( 0, level( 1, level( 2, null, l2extra ) ) ),
        eh( 'L0' )
    ).add( ( as ) => L( 'next run' ) );
    return root;
};

scenarios( [
    [ 'a: cancel from setImmediate while L2 waits', () => {
        const root = build();
        root.execute();
        setImmediate( () => {
            L( 'calling cancel' );
            root.cancel();
            L( 'cancel returned' );
        } );
    } ],
    [ 'b: same via promise(): is the promise settled after cancel?', () => {
        const root = build();
        root.promise().then( () => L( 'promise resolved' ), ( e ) => L( 'promise rejected ' + e.message ) );
        setImmediate( () => {
            L( 'calling cancel' );
            root.cancel();
            L( 'cancel returned' );
        } );
    } ],
    [ 'c: L2 also has setTimeout(20): is the timer cleared by cancel?', () => {
        const root = build( ( as ) => as.setTimeout( 20 ) );
        root.execute();
        setImmediate( () => {
            L( 'calling cancel' );
            root.cancel();
            L( 'cancel returned' );
        } );
    } ],
    [ 'd: L2 calls root.cancel() synchronously inside its own step body', () => {
        let root;
        root = build( ( as ) => {
            L( 'L2 calling root.cancel()' );
            root.cancel();
            L( 'L2 cancel returned' );
        } );
        root.execute();
    } ],
    [ 'e: after cancel, the same root gets a new step and execute() again', () => {
        const root = build();
        root.execute();
        setImmediate( () => {
            L( 'calling cancel' );
            root.cancel();
            root.add( ( as ) => L( 'new step after cancel' ) );
            root.execute();
        } );
    } ],
] );
