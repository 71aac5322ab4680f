'use strict';
// Q9: state(): error_info, last_exception, async_stack.
// Named step functions so async_stack entries can be printed by name.
// dump(as) prints: keys=<Object.keys(state()) sorted> error_info=<>
//   last_exception=<message|null|undefined> async_stack=<names of functions, '>' separated>
const { $as, L, scenarios, extError } = require( './_harness' );
const dump = ( tag, as ) => {
    const s = as.state();
    const le = s.last_exception;
    const st = s.async_stack;
    L( tag + ' keys=' + Object.keys( s ).sort().join( ',' ) +
        ' error_info=' + s.error_info +
        ' last_exception=' + ( le ? le.message : le ) +
        ' async_stack=' + ( st ? st.map( ( f ) => f.name || '?' ).join( '>' ) : st ) );
};

scenarios( [
    [ 'a: before any error; error with info; in handler; after recovery', () => {
        const root = $as();
        root.add( function step1( as ) {
            dump( 'step1', as );
            as.add( function step1_1( as ) {
                as.add( function step1_1_1( as ) {
                    as.error( 'MyErr', 'my info' );
                } );
            } );
        }, function step1_onerror( as, err ) {
            dump( 'step1_onerror ' + err, as );
            as.success();
        } );
        root.add( function step2( as ) {
            dump( 'step2', as );
        } );
        root.add( function step3( as ) {
            as.error( 'Second' );
        }, function step3_onerror( as, err ) {
            dump( 'step3_onerror ' + err, as );
            as.success();
        } );
        root.add( function step4( as ) {
            dump( 'step4', as );
        } );
        root.execute();
    } ],
    [ 'b: Timeout error: error_info / last_exception', () => {
        $as().add( function t( as ) {
            as.setTimeout( 10 );
        }, function t_onerror( as, err ) {
            dump( 't_onerror ' + err, as );
        } ).execute();
    } ],
    [ 'c: external error from setImmediate with info', () => {
        $as().add( function w( as ) {
            as.waitExternal();
            setImmediate( () => extError( as, 'ExtErr', 'ext info' ) );
        }, function w_onerror( as, err ) {
            dump( 'w_onerror ' + err, as );
        } ).execute();
    } ],
    [ 'd: loop break: last_exception after the loop', () => {
        $as().add( function s( as ) {
            as.repeat( 3, function body( as, i ) {
                if ( i === 1 ) as.break();
            } );
            as.add( function after( as ) {
                dump( 'after loop', as );
            } );
        } ).execute();
    } ],
    [ 'e: state() identity: same object in root, steps, parallel branches; user keys', () => {
        const root = $as();
        root.state().fromRoot = 1;
        root.add( function s( as ) {
            L( 'same object: ' + ( as.state() === root.state() ) );
            as.parallel().add( function b( as ) {
                L( 'branch same object: ' + ( as.state() === root.state() ) );
                as.state().fromBranch = 2;
            } );
        } ).add( function n( as ) {
            dump( 'n', as );
        } ).execute();
    } ],
] );
