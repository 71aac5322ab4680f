'use strict';
// Spec 1.4 parallel abort, mode 'recover' (see _s1_4_common.js for the exact scenario).
require( './_s1_4_common' )( 'recover' );
