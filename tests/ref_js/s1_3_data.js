'use strict';
// Spec 1.3, mode 'data' (see _s1_3_common.js)
require( './_s1_3_common' )( 'data' );
