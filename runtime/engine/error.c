/*
 * Error codes and the root's record of its last error (error_info and the
 * code read back as last_exception). Standard and loop codes are kept as
 * their static strings, so a loop ended by breakLoop() allocates nothing.
 */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

const char futoin__code_loop_break[] = FUTOIN_ERR_LOOP_BREAK;
const char futoin__code_loop_cont[] = FUTOIN_ERR_LOOP_CONT;

const char* futoin__static_code(const char* code)
{
    int idx;
    if (!code) {
        return NULL;
    }
    if (code == futoin__code_loop_break
        || strcmp(code, futoin__code_loop_break) == 0) {
        return futoin__code_loop_break;
    }
    if (code == futoin__code_loop_cont
        || strcmp(code, futoin__code_loop_cont) == 0) {
        return futoin__code_loop_cont;
    }
    idx = futoin_error_lookup(code);
    return idx >= 0 ? futoin_error_name((futoin_error)idx) : NULL;
}

void futoin__root_clear_error(futoin__root* r)
{
    futoin__root_rare* x = r->rare;
    if (!x) {
        return;
    }
    if (x->error_owned) {
        free((char*)x->error_code);
    }
    free(x->error_info);
    x->error_code = NULL;
    x->error_info = NULL;
    x->error_owned = 0;
}

void futoin__root_set_error(
        futoin__root* r, const char* code, const char* info)
{
    /* Standard and loop codes are kept as their static strings: a loop
     * ended by breakLoop() costs no allocation here (but for the root's
     * rare record, the first time). */
    futoin__root_rare* x = futoin__root_rare_get(r);
    const char* keep;
    char* ninfo;
    char* ncode;
    if (!x) {
        return; /* out of memory: the error unwinds, unrecorded */
    }
    keep = futoin__static_code(code);
    ninfo = info ? strdup(info) : NULL;
    ncode = keep ? NULL : strdup(code ? code : "");
    futoin__root_clear_error(r);
    x->error_code = keep ? keep : ncode;
    x->error_owned = keep ? 0 : 1;
    x->error_info = ninfo;
    /* A new error replaces the language exception of the last one, unless
     * the binding attached one for this error just before raising it: an
     * error raised with none (a Timeout, a C step's error) must not show
     * an older, handled exception as its own. */
    if (x->last_exc && !x->exc_pending) {
        futoin__root_set_exception(r, NULL);
    }
    x->exc_pending = 0;
}
