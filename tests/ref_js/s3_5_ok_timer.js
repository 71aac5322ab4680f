'use strict';
// Spec 3.5: via=timer err=null onerror=false (see _s3_5_common.js)
require( './_s3_5_common' )( 'timer', null, false );
