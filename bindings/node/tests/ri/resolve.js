'use strict';
// The smallest adapter between futoin-asyncsteps' own test files and this
// binding: a hook on Node's module resolution (loaded with `mocha
// --require`) that maps the package's module names to ours. The test
// files themselves are run unmodified, from the installed package.
//
//   futoin-asyncsteps, <pkg>/es5/lib/main-full.js, <pkg>/lib/main-full.js -> lib/index.js
//   <pkg>/es5/testcase.js                                             -> lib/testcase.js
//   <pkg>/es5/lib/common.js  -> common.js here (the tests read a few
//                               internal symbols from it)
const Module = require('module');
const path = require('path');

const lib = path.join(__dirname, '..', '..', 'lib');
const map = {
    'es5/lib/main-full.js': path.join(lib, 'index.js'),
    'lib/main-full.js': path.join(lib, 'index.js'),
    'es5/lib/main.js': path.join(lib, 'index.js'),
    'es5/testcase.js': path.join(lib, 'testcase.js'),
    'es5/lib/common.js': path.join(__dirname, 'common.js'),
};
const marker = `${path.sep}node_modules${path.sep}futoin-asyncsteps${path.sep}`;

const orig = Module._resolveFilename;
Module._resolveFilename = function(request, parent, ...rest) {
    if (request === 'futoin-asyncsteps') {
        return map['es5/lib/main-full.js'];
    }
    const file = orig.call(this, request, parent, ...rest);
    const at = file.lastIndexOf(marker);
    if (at >= 0) {
        const rel = file.slice(at + marker.length).split(path.sep).join('/');
        if (map[rel]) {
            return map[rel];
        }
    }
    return file;
};
