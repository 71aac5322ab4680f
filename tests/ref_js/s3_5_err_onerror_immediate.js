'use strict';
// Spec 3.5: via=immediate err='ExtError' onerror=true (see _s3_5_common.js)
require( './_s3_5_common' )( 'immediate', 'ExtError', true );
