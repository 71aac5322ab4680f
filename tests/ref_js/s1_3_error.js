'use strict';
// Spec 1.3, mode 'error' (see _s1_3_common.js)
require( './_s1_3_common' )( 'error' );
