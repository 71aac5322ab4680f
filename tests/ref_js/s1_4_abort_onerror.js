'use strict';
// Spec 1.4 parallel abort, mode 'onerror' (see _s1_4_common.js for the exact scenario).
require( './_s1_4_common' )( 'onerror' );
