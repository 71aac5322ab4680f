'use strict';
// Spec 1.4 parallel abort, mode 'plain' (see _s1_4_common.js for the exact scenario).
require( './_s1_4_common' )( 'plain' );
