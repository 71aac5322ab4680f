'use strict';
// Q5: loops.
const { $as, L, A, scenarios } = require( './_harness' );
const eh = ( n, recover ) => ( as, err ) => {
    L( n + ' onerror ' + err );
    if ( recover ) as.success( recover );
};
const next = ( as, ...args ) => L( 'next step ' + A( args ) );

scenarios( [
    [ 'a: prev success(p); loop body prints args + i, success(i) ; break when i==2', () => {
        let i = 0;
        $as().add( ( as ) => as.success( 'p' ) ).add( ( as, ...args ) => {
            L( 'S run ' + A( args ) );
            as.loop( ( as, ...args ) => {
                L( 'body ' + i + ' ' + A( args ) );
                if ( i === 2 ) as.break();
                as.success( 'it' + i++ );
            } );
        }, eh( 'S' ) ).add( next ).execute();
    } ],
    [ 'b: loop body with sub-step success(v<i>) - does it reach the next iteration / the step after?', () => {
        let i = 0;
        $as().add( ( as ) => {
            as.loop( ( as, ...args ) => {
                L( 'body ' + i + ' ' + A( args ) );
                as.add( ( as ) => {
                    if ( i === 2 ) as.break();
                    as.success( 'v' + i++ );
                } );
            } );
        } ).add( next ).execute();
    } ],
    [ 'c: nested loops OUTER/INNER; inner breaks "OUTER" on outer=1,inner=1', () => {
        let o = 0;
        $as().add( ( as ) => {
            as.loop( ( as ) => {
                const oi = o++;
                let n = 0;
                L( 'outer ' + oi );
                if ( oi === 3 ) as.break();
                as.loop( ( as ) => {
                    const ni = n++;
                    L( 'inner ' + oi + '.' + ni );
                    if ( ni === 2 ) as.break();
                    if ( oi === 1 && ni === 1 ) as.break( 'OUTER' );
                }, 'INNER' );
                as.add( ( as ) => L( 'outer ' + oi + ' after inner' ) );
            }, 'OUTER' );
        } ).add( next ).execute();
    } ],
    [ 'd: nested loops; inner continues "OUTER" on inner=1 (outer stops at 3)', () => {
        let o = 0;
        $as().add( ( as ) => {
            as.loop( ( as ) => {
                const oi = o++;
                let n = 0;
                L( 'outer ' + oi );
                if ( oi === 3 ) as.break();
                as.loop( ( as ) => {
                    const ni = n++;
                    L( 'inner ' + oi + '.' + ni );
                    if ( ni === 1 ) as.continue( 'OUTER' );
                } );
                as.add( ( as ) => L( 'outer ' + oi + ' after inner' ) );
            }, 'OUTER' );
        } ).add( next ).execute();
    } ],
    [ 'e: break with unknown label "NOPE" from inner loop; step S (containing loops) has onerror', () => {
        $as().add( ( as ) => {
            as.loop( ( as ) => {
                L( 'outer body' );
                as.loop( ( as ) => {
                    L( 'inner body' );
                    as.break( 'NOPE' );
                }, 'INNER' );
            }, 'OUTER' );
        }, eh( 'S' ) ).add( next ).execute();
    } ],
    [ 'f: continue with unknown label "NOPE"; step S has onerror', () => {
        $as().add( ( as ) => {
            as.loop( ( as ) => {
                L( 'body' );
                as.continue( 'NOPE' );
            }, 'L1' );
        }, eh( 'S' ) ).add( next ).execute();
    } ],
    [ 'g: break() outside any loop; step has onerror', () => {
        $as().add( ( as ) => {
            L( 'S run' );
            as.break();
        }, eh( 'S' ) ).add( next ).execute();
    } ],
    [ 'h: continue() outside any loop; step has onerror', () => {
        $as().add( ( as ) => {
            L( 'S run' );
            as.continue();
        }, eh( 'S' ) ).add( next ).execute();
    } ],
    [ 'i: break() outside any loop, no handler anywhere', () => {
        $as().add( ( as ) => {
            L( 'S run' );
            as.break();
        } ).add( next ).execute();
    } ],
    [ 'j: repeat(0)', () => {
        $as().add( ( as ) => as.success( 'p' ) ).add( ( as ) => {
            as.repeat( 0, ( as, i ) => L( 'body ' + i ) );
        } ).add( next ).execute();
    } ],
    [ 'k: repeat(3) body prints i; error MyErr at i==1; step S (containing loop) onerror success(rec)', () => {
        $as().add( ( as ) => {
            as.repeat( 3, ( as, i ) => {
                L( 'body ' + i );
                if ( i === 1 ) as.error( 'MyErr' );
            } );
            as.add( ( as ) => L( 'S sub-step after loop' ) );
        }, eh( 'S', 'rec' ) ).add( next ).execute();
    } ],
    [ 'l: break() called from a sub-step error handler inside the body (repeat 5, error at i==2)', () => {
        $as().add( ( as ) => {
            as.repeat( 5, ( as, i ) => {
                L( 'body ' + i );
                as.add( ( as ) => {
                    if ( i === 2 ) as.error( 'MyErr' );
                }, ( as, err ) => {
                    L( 'sub onerror ' + err + ' -> break' );
                    as.break();
                } );
            } );
        }, eh( 'S' ) ).add( next ).execute();
    } ],
    [ 'm: break() from a sub-sub-step of the body; body has setCancel', () => {
        $as().add( ( as ) => {
            as.repeat( 5, ( as, i ) => {
                L( 'body ' + i );
                as.setCancel( ( as ) => L( 'body ' + i + ' cancel' ) );
                as.add( ( as ) => {
                    as.add( ( as ) => {
                        if ( i === 1 ) as.break();
                    } );
                } );
            } );
        }, eh( 'S' ) ).add( next ).execute();
    } ],
    [ 'n: continue() at i==1 in repeat(3) skips the rest of the body', () => {
        $as().add( ( as ) => {
            as.repeat( 3, ( as, i ) => {
                L( 'body ' + i );
                as.add( ( as ) => {
                    if ( i === 1 ) as.continue();
                    L( 'body ' + i + ' sub' );
                } );
                as.add( ( as ) => L( 'body ' + i + ' sub2' ) );
            } );
        } ).add( next ).execute();
    } ],
    [ 'o: forEach over {a:1,b:2} and over [apple,banana]; break in forEach at k==1', () => {
        $as().add( ( as ) => {
            as.forEach( { a: 1, b: 2 }, ( as, k, v ) => L( k + ' = ' + v ) );
            as.forEach( [ 'apple', 'banana', 'cherry' ], ( as, k, v ) => {
                L( k + ' = ' + v );
                if ( k === 1 ) as.break();
            } );
        } ).add( next ).execute();
    } ],
    [ 'p: break with the label of the CURRENT loop', () => {
        $as().add( ( as ) => {
            as.repeat( 3, ( as, i ) => {
                L( 'body ' + i );
                if ( i === 1 ) as.break( 'ME' );
            }, 'ME' );
        } ).add( next ).execute();
    } ],
    [ 'q: loop directly on root (root.loop), break at 2', () => {
        let i = 0;
        const root = $as();
        root.loop( ( as ) => {
            L( 'body ' + i );
            if ( i++ === 2 ) as.break();
        } );
        root.add( next ).execute();
    } ],
] );
