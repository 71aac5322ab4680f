'use strict';
// Spec 3.3, fail=0 (see _s3_3_common.js)
require( './_s3_3_common' )( 0 );
