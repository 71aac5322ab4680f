/*
 * What the files behind the AsyncSteps methods share among themselves
 * (futoin_lua.h is what the SWIG module calls): handle objects, the checks
 * that refuse misuse at the call site, the calls of Lua functions by the
 * trampolines, and the flow's state and last error as the other files
 * read them.
 *
 * Files: lua_steps.c (handle objects, argument checks, adding steps,
 * waiting, loops, queries), lua_complete.c (success(), error()),
 * lua_trampoline.c (the trampolines that call Lua functions for the
 * runtime; a step's return value), lua_root.c (roots: made, executed,
 * ended, freed), lua_state.c (state() tables, the state shared between
 * languages, the flow's last error, async stacks).
 */
#ifndef FUTOIN_LUA_STEPS_H
#define FUTOIN_LUA_STEPS_H

#include "futoin_lua.h"

/* ---- handle objects (lua_steps.c) ---------------------------------------- */

/** Push a new handle object (a full userdata with `nuv` user values) of
 *  `kind` (FL_STEP, FL_ROOT, FL_PAR, FL_WRAP) over `bsi`. */
fl_steps* fl_push_steps(lua_State* L, fl_ctx* ctx, FutoInAsyncSteps* bsi,
                        int kind, int nuv);

/* ---- argument checks, records (lua_steps.c) ------------------------------ */

/** `idx` (0: absent) must be callable, or nil when `optional`: returns
 *  idx, or 0 for an absent optional one; else a Lua error naming `what`
 *  and `name`. */
int fl_check_fn(lua_State* L, int idx, int optional, const char* what,
                const char* name);
/** The C string of string argument `idx`, refused (a Lua error naming
 *  `name`) if an embedded NUL would cut it. */
const char* fl_c_string(lua_State* L, int idx, const char* what,
                        const char* name);
/** A record anchoring the functions at fn_idx / eh_idx (0: none); a Lua
 *  error when out of memory. */
fl_rec* fl_make_rec(lua_State* L, fl_ctx* ctx, int fn_idx, int eh_idx);

/* ---- gates: refuse misuse at the call site ------------------------------- */

enum
{
    FL_G_ADD,      /* add(), parallel(), loop()...: only while the callback runs */
    FL_G_EXEC,     /* set_timeout(), set_cancel(), wait_external(): execute only */
    FL_G_COMPLETE, /* success(), error(): in the callback or while waiting */
    FL_G_LOOPCTL,  /* break/continue: in the callback (or its error handler) */
    FL_G_ANY       /* state() and queries: any live handle */
};

/* Returns 1 if the call may go on, 0 if it is a completion that lost the
 * race with a timeout or cancel (the caller returns false), or raises. */
static inline int fl_gate(lua_State* L, fl_steps* s, int g, const char* what)
{
    uint16_t f = s->flags;
    if (s->kind != FL_STEP) {
        if (!s->bsi) {
            luaL_error(L, "%s: the AsyncSteps object was freed", what);
        }
        return 1; /* roots, parallel() and adopted handles: the runtime decides */
    }
    /* a step's handle always has a bsi, but the ghost (lua_handle.c),
     * which is finished */
    if (f & FL_F_DONE) {
        if (g == FL_G_COMPLETE && (f & FL_F_LOST)) {
            return 0;
        }
        if (g == FL_G_COMPLETE && (f & (FL_F_SUCCESS | FL_F_FAILED))) {
            luaL_error(L, "%s: the step was already completed", what);
        }
        luaL_error(L, "%s: the step has finished; its handle may not be used "
                      "any more", what);
    }
    if (f & FL_F_CANCELH) {
        if (g != FL_G_ANY) {
            luaL_error(L, "%s: not allowed in a cancel handler", what);
        }
        return 1;
    }
    if (g == FL_G_ANY) {
        return 1;
    }
    if (!(f & FL_F_ACTIVE)) {
        /* a waiting step whose callback returned */
        if (g == FL_G_COMPLETE) {
            return 1;
        }
        luaL_error(L, "%s: only the step's own callback may call this (the "
                      "step is waiting for success() or error())", what);
    }
    if (f & FL_F_FAILED) {
        luaL_error(L, "%s: after error()", what);
    }
    switch (g) {
    case FL_G_ADD:
        if ((f & FL_F_SUCCESS) && !(f & FL_F_ERRH)) {
            luaL_error(L, "%s: after success()", what);
        }
        break;
    case FL_G_EXEC:
        if (f & FL_F_ERRH) {
            luaL_error(L, "%s: not allowed in an error handler", what);
        }
        break;
    default:
        break;
    }
    return 1;
}

/* ---- trampolines (lua_trampoline.c) -------------------------------------- */

/** What a call into Lua is for: a step, an error handler, a cancel
 *  handler, a loop body, a repeat_loop body. */
enum { FL_CALL_STEP, FL_CALL_ERROR, FL_CALL_CANCEL, FL_CALL_LOOP, FL_CALL_REPEAT };

/** One call of a Lua function by a trampoline. */
typedef struct fl_call
{
    FutoInAsyncSteps* bsi;
    fl_rec* rec;
    const FutoInArgs* args;
    const char* code;
    size_t index;
    int kind;
    fl_steps* s; /* the handle object made for the call */
    /* FL_CALL_STEP: where its success() of scalars is kept (NULL: never
     * kept), and how many values (-1: none kept). A kept success() goes
     * to the next Lua step as it is when the runtime lets that one run
     * in the same call (chain()), else to the runtime when the call
     * returns, or before anything else reaches the runtime through the
     * handle (fl_kept_flush). */
    FutoInArgs* kept;
    FutoInArgs* spare; /* the other buffer, for the next step's success() */
    int kept_n; /* or FL_KEPT_INT: one integer, in kept_i */
    lua_Integer kept_i;
    lua_Integer arg_i; /* args == &fl_args_int: the step's one integer */
    int chained; /* how chain_body() ended (lua_trampoline.c) */
    struct fl_call* prev; /* the context's call this one runs inside */
    /* The light userdata value of `s` while `s` is a light handle made for
     * a step (FL_CALL_STEP), else NULL: success() finds its call by this
     * value alone (lua_complete.c), without decoding the handle. */
    void* hv;
} fl_call;

/** fl_call.kept_n of a success() of one integer (fl_call.kept_i), the
 *  usual one: no FutoInArgs is filled unless the runtime gets it. */
enum { FL_KEPT_INT = 5 };
/** fl_call.args of a chained step whose one argument is the integer
 *  fl_call.arg_i (chain_next(), lua_trampoline.c): read only by the
 *  chained run; anything else that takes the call gets real FutoInArgs
 *  first (fl_call_args_fill). */
extern const FutoInArgs fl_args_int;

/** The trampolines of error handlers, cancel handlers, loop and
 *  repeat_loop bodies (a record with the function); fl_tr_step, the one
 *  of steps, is in futoin_lua.h. */
void fl_tr_error(FutoInAsyncSteps* bsi, void* data, const char* code);
void fl_tr_cancel(FutoInAsyncSteps* bsi, void* data);
void fl_tr_loop(FutoInAsyncSteps* bsi, void* data);
void fl_tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i);

/* ---- the flow's state and last error (lua_state.c) ----------------------- */

/** Make the state variable of root `s` point at the root (once). */
void fl_state_map_root(fl_ctx* ctx, fl_steps* s);
/** Push last_exception: the Lua error object if the error came from this
 *  state, else the error code, else nil. */
void fl_push_last_exception(lua_State* L, fl_ctx* ctx, FutoInAsyncSteps* bsi);
/** Push error_info (nil if there is none). */
void fl_push_error_info(lua_State* L, FutoInAsyncSteps* bsi);

#endif
