/*
 * Internal interface of the Lua 5.4 binding's C support code.
 *
 * SWIG generates the module futoin_async.core from
 * bindings/lua/interface/futoin_lua.i (which includes the language-neutral
 * bindings/futoin_async.i): the wrappers, their argument counts and
 * checks, the module table. The wrappers call the functions declared
 * here, which hold what SWIG cannot generate: the trampolines that run Lua
 * functions as steps, the handle objects and their state checks, registry
 * references and the FutoInBinaryValue <-> Lua conversion.
 *
 * Files: lua_ctx.c (per-state context, registry references, the traceback
 * handler, misuse capture), lua_values.c (conversion), lua_steps.c
 * (AsyncSteps operations; lua_steps.h is what it shares with the files
 * below), lua_complete.c (success(), error()), lua_trampoline.c (the
 * trampolines calling Lua functions for the runtime), lua_root.c (roots:
 * made, executed, ended, freed), lua_state.c (state() tables, shared
 * state, the flow's last error), lua_handle.c (step handles as light
 * userdata), lua_tool.c (Tool, timers, luv), lua_policy.c (the load
 * policy), host/lua_host.c (the language host "lua").
 *
 * Rules every file keeps:
 *  - Lua is entered from C only through lua_pcall (fl_ctx_call), with a
 *    traceback handler; nothing raises a Lua error while a library frame is
 *    on the C stack between the raise and the catching pcall.
 *  - References live in the registry and are taken and dropped through
 *    fl_ref()/fl_unref(), which count them (fl_ctx.refs, for the leak tests).
 *  - Trampolines use the main thread (LUA_RIDX_MAINTHREAD), or the thread
 *    that is inside Tool:run() right now: never a coroutine that might be
 *    collected while the runtime still holds something of it.
 */
#ifndef FUTOIN_LUA_H
#define FUTOIN_LUA_H

#include <lauxlib.h>
#include <lua.h>

#include <futoin/async.h>
#include <futoin/sync.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>
#include <futoin/sys/wrap.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* ---- per-state context (lua_ctx.c) --------------------------------------- */

typedef struct fl_rec fl_rec;
typedef struct fl_steps fl_steps;
typedef struct fl_tool fl_tool;
typedef struct fl_hslot fl_hslot;

/** A handle object's state (lua_steps.c): a root, a parallel(), an adopted
 * handle (full userdata), or a step's handle (a slot of lua_handle.c,
 * reached through a light userdata, or a full userdata). */
struct fl_steps
{
    const void* magic; /* &fl_steps_magic: recognises our objects */
    FutoInAsyncSteps* bsi; /* NULL once closed */
    struct fl_ctx* ctx;
    fl_rec* rec;       /* FL_STEP: the record of the running/waiting call */
    fl_tool* tool;     /* FL_ROOT: the tool object (anchored), or NULL */
    uint16_t flags;
    uint8_t kind;
};

/** Metatables made by the C side; the Lua layer fills their __index. */
enum
{
    FL_MT_STEP,   /* a step's handle (asi) */
    FL_MT_ROOT,   /* a root AsyncSteps */
    FL_MT_PAR,    /* the handle parallel() returns */
    FL_MT_TOOL,   /* a Tool */
    FL_MT_TIMER,  /* what Tool:immediate()/deferred() return */
    FL_MT_OPAQUE, /* a value of another language */
    FL_MT_LIGHT,  /* light userdata: step handles (lua_handle.c) */
    FL_MT_COUNT
};

typedef struct fl_ctx
{
    lua_State* L;      /* the main thread */
    lua_State* run_L;  /* the thread inside Tool:run()/run_nowait(), or NULL */
    long refs;         /* registry references held by the glue right now */
    long recs;         /* callback records allocated and not yet released */
    int mt[FL_MT_COUNT]; /* registry refs of the metatables (fixed) */
    int err_new;       /* registry ref: function(code, info, handled) -> error */
    int bytes_mt;      /* registry ref: metatable of fa.bytes() values */
    int co_steps;      /* registry ref: {coroutine = asi} of coroutine steps */
    int err_slot;      /* registry ref: the original object of the last error */
    fl_rec* free_recs; /* free callback records (see fl_rec) */
    /* The shared anchor (see fl_rec): one step function that many records
     * hold, anchored once. */
    int share_ref;          /* registry ref of its slot (fixed: not counted) */
    const void* share_ptr;  /* lua_topointer() of the function, or NULL */
    long share_cnt;         /* records holding it (FL_A_FN with FL_H_SHARED) */
    struct fl_chunk* chunks; /* the slabs records come from */
    uint32_t nrecs_total; /* records in all chunks */
    int misuse;        /* the misuse callback fired since the last check */
    char misuse_msg[256];
    int closed;
    char state_name[40]; /* "lua.state.<ctx>": this state's state() table */
    int pending_state;   /* the table state() is about to install */
    void* pending_root;  /* ... or the root whose object holds it */
    int state_mt;        /* registry ref: metatable of state() tables (fixed) */
    FutoInAsyncSteps* cur_bsi; /* the handle of the Lua callback running now */
    struct fl_call* cur_call;  /* that callback's call (lua_trampoline.c), or
                                * NULL; calls nest through fl_call.prev */
    /* The runtime's extension table (version 4 or later), and the api
     * tables of the handles it was found for (fl_ext_of) */
    const futoin_async_ext_table* ext;
    const void* ext_api[3];
    lua_State* host_L;   /* the thread asking futoin_host_add() right now */
    /* step handles as light userdata (lua_handle.c) */
    int light;           /* new calls get light handles */
    int light_claimed;   /* light_id is ours */
    unsigned light_id;   /* this context's number in handle values */
    fl_hslot** hchunks;  /* slots, in chunks */
    uint32_t nhchunks;   /* entries of hchunks */
    uint32_t nhslots;    /* slots made */
    fl_hslot* hq_head;   /* retired slots, oldest first */
    fl_hslot* hq_tail;
    uint32_t hq_count;
    fl_steps ghost;      /* a handle whose slot moved on (lua_handle.c) */
    int tools_ref;       /* registry ref: {lightuserdata(futoin_tool*) = Tool},
                          * weak values (lua_tool.c) */
    struct fl_tool* sweepers; /* borrowed tools whose roots may need another
                               * collection (lua_tool.c) */
    int async_fns;       /* registry ref: {fa.async() wrapper = the user's
                          * function}, weak keys (origins, host/lua_host.c) */
} fl_ctx;

/** The context of the state `L` belongs to (from the registry). */
fl_ctx* fl_ctx_get(lua_State* L);
/** The same, NULL (never raising) when the module was not opened in L. */
fl_ctx* fl_ctx_peek(lua_State* L);
/** Create the context and the metatables (luaopen); stack unchanged. */
fl_ctx* fl_ctx_open(lua_State* L);
/** The thread trampolines run on right now. */
static inline lua_State* fl_ctx_state(fl_ctx* ctx)
{
    return ctx->run_L ? ctx->run_L : ctx->L;
}

/** fl_ext_of() of a handle of an api table not seen yet. */
const futoin_async_ext_table* fl_ext_learn(fl_ctx* ctx, FutoInAsyncSteps* bsi);
/** The runtime's extension table if `bsi` is a handle of ours and the
 *  table has chain() (version 4), else NULL: the fast paths call its slots
 *  directly, without futoin_wrap_*() and its look-up each time. */
static inline const futoin_async_ext_table* fl_ext_of(fl_ctx* ctx, FutoInAsyncSteps* bsi)
{
    const void* api = bsi->api;
    if (api == ctx->ext_api[0] || api == ctx->ext_api[1] || api == ctx->ext_api[2]) {
        return ctx->ext;
    }
    return fl_ext_learn(ctx, bsi);
}

/** luaL_ref of the value on top (popped), counted. */
int fl_ref(lua_State* L, fl_ctx* ctx);
/** luaL_unref, counted; LUA_NOREF/LUA_REFNIL are ignored. */
void fl_unref(fl_ctx* ctx, int ref);

/** Callback records: one per add()/loop()/set_cancel()/execute()...
 *
 * Records come from slabs (chunks) of the context and are recycled, never
 * freed before the context. A record owns up to three registry references
 * (FL_A_FN, FL_A_EH, FL_A_WAIT), taken the first time the record needs
 * them and kept for its life: the Lua values the runtime holds through it
 * stay reachable there. Anchoring a value is one registry write, dropping
 * it another (false, never nil, so that luaL_ref() never takes the slot
 * for someone else); luaL_ref() each time would take three, and malloc()
 * per step more still. A write to an existing slot never allocates:
 * fl_rec_set (once the reference exists) and fl_rec_clear never raise. */
enum { FL_A_FN = 1, FL_A_EH = 2, FL_A_WAIT = 3 };
/* Bit 0 of fl_rec.has: the record's FL_A_FN value is the context's shared
 * anchor (ctx->share_ref), not its own slot. The same step function added
 * again and again (a named function, a loop adding one handler) is then
 * anchored once and counted: adding it and releasing the record write no
 * registry slot, and the anchor is cleared when its last record goes. A
 * function is only ever compared with the anchored one, which cannot be
 * collected (nor its address reused) while anchored. */
enum { FL_H_SHARED = 1 };
/* Bit 4 of fl_rec.has: the record has an origin (name or src set, freed
 * when it is released), so that `has` alone tells the usual record. */
enum { FL_H_ORIGIN = 16 };
/** The record's name/src were set: mark it so (FL_H_ORIGIN). */
static inline void fl_rec_origin_set(fl_rec* r);

struct fl_rec
{
    fl_ctx* ctx;
    fl_steps* live;    /* the handle object of this record's current call */
    fl_rec* next;      /* free list */
    int ref[3];        /* registry refs of its slots FL_A_FN.. (kept) */
    uint8_t has;       /* bit (1 << FL_A_*): the slot holds a value */
    uint32_t line;     /* origin: the function's first line (lazy) */
    char* name;        /* origin: "module.function" of a named step, or NULL */
    char* src;         /* origin: the function's source file (lazy), or NULL */
};

/** A free record, with the references of the slots in `need` (bits
 *  1 << FL_A_*); NULL if out of memory. May raise (out of memory) while
 *  it takes them, before the record is handed out. */
fl_rec* fl_rec_new(lua_State* L, fl_ctx* ctx, unsigned need);
/** Take the reference of the record's slot `which` if it has none (may
 *  raise: out of memory). */
void fl_rec_reserve(lua_State* L, fl_rec* r, int which);
/** Anchor the value at `idx` in the record's slot `which` (raises only if
 *  the slot's reference must be taken first, see fl_rec_reserve). */
void fl_rec_set(lua_State* L, fl_rec* r, int which, int idx);
/** Push the value of the record's slot `which` (false if none). */
static inline void fl_rec_push(lua_State* L, const fl_rec* r, int which)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX,
                which == FL_A_FN && (r->has & FL_H_SHARED) ? r->ctx->share_ref
                                                           : r->ref[which - 1]);
}
/** A record lets go of the shared anchor (FL_H_SHARED is cleared); the
 *  last one clears the anchor's slot (never raises). */
void fl_rec_unshare(fl_rec* r);
/** Drop the value of the record's slot `which` (never raises). */
void fl_rec_clear(fl_rec* r, int which);
static inline void fl_rec_origin_set(fl_rec* r)
{
    r->has |= FL_H_ORIGIN;
}
static inline int fl_rec_has(const fl_rec* r, int which)
{
    return (r->has >> which) & 1;
}
/** The handle object of the record's last call is finished: refuse calls
 *  through it from now on (a waiting one that nobody completed is "lost"
 *  to a timeout or cancel) and drop the reference that kept it alive. */
void fl_rec_detach(fl_rec* r);
/** The release hook given to the runtime: runs exactly once per record
 *  (or the binding releases a record itself, once, in its place: ext
 *  chain_kept(), lua_trampoline.c). */
void fl_rec_release(void* data);
/** fl_rec_release() of any record (the slow way). */
void fl_rec_release_slow(fl_rec* r);
/** fl_rec_release() of the usual record, inline: the shared step function
 *  and nothing else (no live handle, origin or other value), not its last
 *  holder, in an open context that no tool waits on. The record goes back
 *  to the free list as it was taken (add_fast(), lua_steps.c), with no
 *  call (fl_rec_release_usual: the stores, once the record is known to be
 *  such). Returns 0, having done nothing, for any other record. */
static inline void fl_rec_release_usual(fl_ctx* ctx, fl_rec* r)
{
    r->has = 0;
    --ctx->refs;
    --ctx->share_cnt;
    r->next = ctx->free_recs;
    ctx->free_recs = r;
    --ctx->recs;
}
static inline int fl_rec_release_fast(fl_rec* r)
{
    fl_ctx* ctx = r->ctx;
    if (r->has == ((1u << FL_A_FN) | FL_H_SHARED) && !r->live && ctx->share_cnt > 1
        && !ctx->closed && !ctx->sweepers) { /* has: no origin either */
        fl_rec_release_usual(ctx, r);
        return 1;
    }
    return 0;
}

/** The class of a record's data (add_classed): release + origin. */
extern const futoin_step_class fl_rec_class;

/** The traceback handler given to lua_pcall (see lua_ctx.c). */
int fl_msgh(lua_State* L);
/** The C function that runs chained Lua steps (lua_trampoline.c); left
 *  out of tracebacks. */
int fl_chain_body(lua_State* L);

/** Misuse callback of our tools: remembers the message for fl_check_misuse. */
void fl_on_misuse(void* data, const char* code, const char* message);
/** Raise the misuse reported during the last call (ctx->misuse is set). */
void fl_raise_misuse(lua_State* L, fl_ctx* ctx, const char* what);
/** Raise the misuse reported during the last call, if any. */
static inline void fl_check_misuse(lua_State* L, fl_ctx* ctx, const char* what)
{
    if (ctx->misuse) {
        fl_raise_misuse(L, ctx, what);
    }
}
static inline void fl_clear_misuse(fl_ctx* ctx) { ctx->misuse = 0; }

/** Is the value at `idx` an error object of this binding (FutoInError)? */
int fl_is_error_obj(lua_State* L, int idx);
/** Push a new FutoInError(code, info); `handled` marks it as reported. */
void fl_push_error(lua_State* L, fl_ctx* ctx, const char* code,
                   const char* info, int handled);

/* ---- values (lua_values.c) ---------------------------------------------- */

enum { FL_ENOMEM = -1, FL_ESPENT = -2 };
/** Lua value at `idx` -> binary value (owning what it points to). Returns
 *  0, FL_ENOMEM, or FL_ESPENT for an Opaque that was already passed on;
 *  `v` is then empty. Does not raise (but for luaL_ref out of memory). */
int fl_to_binval(lua_State* L, fl_ctx* ctx, int idx, FutoInBinaryValue* v);
/** Push the Lua value of a binary value. A value of another language
 *  (custom, or an array that Lua cannot represent) is MOVED into an Opaque
 *  object (the caller's copy is reset), so the runtime does not clean it up
 *  twice. */
void fl_push_binval(lua_State* L, fl_ctx* ctx, FutoInBinaryValue* v);
/** Values at idx..idx+n-1 (n <= 4) -> FutoInArgs; raises a Lua error (with
 *  nothing converted or moved) on failure. */
void fl_args_from(lua_State* L, fl_ctx* ctx, int idx, int n, FutoInArgs* a);
void fl_args_reset(FutoInArgs* a);
extern const FutoInType fl_ty_bool, fl_ty_i64, fl_ty_double;
/** A number or boolean at `idx` -> binary value, as fl_to_binval() makes
 *  it (owning nothing); 0 (v untouched) for any other type. */
static inline int fl_to_binval_plain(lua_State* L, int idx, FutoInBinaryValue* v)
{
    if (lua_isinteger(L, idx)) { /* the usual one first: two API calls */
        v->type = &fl_ty_i64;
        v->i64 = (int64_t)lua_tointeger(L, idx);
        v->custom_data = NULL;
        v->length = 0;
        return 1;
    }
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        /* lua_isinteger: the subtype (2.0 stays a float) */
        if (lua_isinteger(L, idx)) {
            v->type = &fl_ty_i64;
            v->i64 = (int64_t)lua_tointeger(L, idx);
        } else {
            v->type = &fl_ty_double;
            v->d = (double)lua_tonumber(L, idx);
        }
        break;
    case LUA_TBOOLEAN:
        v->type = &fl_ty_bool;
        v->u64 = 0;
        v->b = lua_toboolean(L, idx) != 0;
        break;
    default:
        return 0;
    }
    v->custom_data = NULL;
    v->length = 0;
    return 1;
}
/** Push the values of `a` (until the first empty one); returns how many. */
int fl_push_args(lua_State* L, fl_ctx* ctx, const FutoInArgs* a);
/** The same for values that need no allocation (numbers, booleans, custom
 *  values of this state, nil): never raises, needs room for 4 values on
 *  the stack. Returns -1, having pushed nothing, if a value would need
 *  fl_push_args(). */
int fl_push_args_plain(lua_State* L, fl_ctx* ctx, const FutoInArgs* a);
/** A custom value of Lua holding a reference to the value at `idx`. */
void fl_set_custom(lua_State* L, fl_ctx* ctx, int idx, FutoInBinaryValue* v);
/** A custom value of Lua taking over the counted reference `ref`
 *  (allocates nothing: usable where raising is not allowed). */
void fl_custom_adopt(fl_ctx* ctx, int ref, FutoInBinaryValue* v);
/** Push the Lua value of a custom value of this state; 0 if it is not one. */
int fl_push_custom(lua_State* L, fl_ctx* ctx, const FutoInBinaryValue* v);
int fl_opaque_gc(lua_State* L);
int fl_opaque_tostring(lua_State* L);

/* ---- steps (lua_steps.c) ------------------------------------------------- */

enum
{
    FL_STEP = 0, /* a callback's handle */
    FL_ROOT = 1, /* a root of ours, freed with the object */
    FL_PAR = 2,  /* parallel() of a step or root */
    FL_WRAP = 3  /* a handle adopted from elsewhere (not freed, not checked) */
};

enum
{
    FL_F_ACTIVE = 1,   /* its callback is running */
    FL_F_WAITING = 2,  /* wait_external(), set_timeout() or set_cancel() */
    FL_F_DONE = 4,     /* finished: calls through it are refused */
    FL_F_SUCCESS = 8,  /* success() was called */
    FL_F_ADDED = 16,   /* something was added */
    FL_F_ERRH = 32,    /* the handle of an error handler */
    FL_F_CANCELH = 64, /* the handle of a cancel handler */
    FL_F_LOST = 128,   /* a waiting step ended by a timeout or cancel */
    FL_F_FAILED = 256, /* error() was called (or raised) */
    FL_F_RUNNING = 512, /* FL_ROOT: executing (kept alive by its tool) */
    FL_F_STATEMAP = 1024, /* FL_ROOT: its state variable points at it */
    FL_F_LIGHT = 2048,  /* FL_STEP: a slot of lua_handle.c (light userdata) */
    FL_F_GHOST = 4096,  /* the stand-in for a handle whose slot moved on */
    FL_F_ENDING = 8192, /* FL_ROOT: its on_done runs inside its flow's end */
    FL_F_KEPT = 16384   /* FL_STEP: its success() is kept by its call, not
                         * yet given to the runtime (fl_kept_flush) */
};



/** The user values of a root of our Tool (fl_root_new). */
enum
{
    FL_UV_TOOL = 1,      /* its Tool object (keeps it alive) */
    FL_UV_UNHANDLED = 2, /* execute()'s unhandled-error callback */
    FL_UV_STATE = 3,     /* its state() table */
    FL_UV_DONE = 4,      /* execute()'s on_done callback */
    FL_UV_RESULT = 5,    /* how its last execution ended (root:result()) */
    FL_ROOT_UVS = 5
};

/** The error code of a cancelled root's result (fa.CancelledError). */
#define FL_CANCELLED "Cancelled"

extern const char fl_steps_magic;

/* ---- step handles as light userdata (lua_handle.c) ------------------------ */

/** Number this context, make the metatable of light userdata (taken if
 *  free) and the ghost handle (luaopen). */
void fl_handles_open(lua_State* L, fl_ctx* ctx);
/** Back to full userdata if another module replaced that metatable. */
void fl_handles_check(lua_State* L, fl_ctx* ctx);
/** The state closes: values of this context are no longer recognised. */
void fl_handles_close(fl_ctx* ctx);
/** Free the slots (with the context). */
void fl_handles_free(fl_ctx* ctx);
/** A call's handle state in a slot (lua_handle.c). */
struct fl_hslot
{
    fl_steps s; /* first: a slot is its fl_steps */
    uint32_t gen;
    /* the high half of its handle values (tag, context number, index;
     * fl_handle_value): fixed when the slot is made */
    uint32_t hi;
    fl_hslot* next; /* FIFO of retired slots */
};
enum { FL_HANDLE_QUARANTINE = 1024, FL_HANDLE_CHUNK = 256 };
/** Contexts by number, so that a value alone finds its slots. */
extern _Atomic(fl_ctx*) fl_handle_ctx[256];

/** A new slot (lua_handle.c), NULL if out of memory or numbers. */
fl_hslot* fl_handle_grow(fl_ctx* ctx);
/** A slot for a new call (flags FL_F_LIGHT), or NULL (then: a userdata).
 *  Retired slots are reused FIFO once more than the quarantine wait. */
static inline fl_steps* fl_handle_new(fl_ctx* ctx, FutoInAsyncSteps* bsi)
{
    fl_hslot* h;
    if (ctx->hq_count > FL_HANDLE_QUARANTINE) {
        h = ctx->hq_head;
        ctx->hq_head = h->next;
        --ctx->hq_count;
        ++h->gen; /* values of its last call no longer match */
    } else if (!(h = fl_handle_grow(ctx))) {
        return NULL;
    }
    /* magic, ctx, tool and kind stay as fl_handle_grow() set them; `next`
     * is only read in the retired FIFO, which fl_handle_retire() sets */
    h->s.bsi = bsi;
    h->s.rec = NULL;
    h->s.flags = FL_F_LIGHT;
    return &h->s;
}
/** The call of slot `s` is over (once per call): reuse it later. */
static inline void fl_handle_retire(fl_steps* s)
{
    fl_hslot* h = (fl_hslot*)s;
    fl_ctx* ctx = s->ctx;
    h->next = NULL;
    if (ctx->hq_tail) {
        ctx->hq_tail->next = h;
    } else {
        ctx->hq_head = h;
    }
    ctx->hq_tail = h;
    ++ctx->hq_count;
}
#if UINTPTR_MAX > 0xFFFFFFFFu
#define FL_HANDLE_BITS 1
/** Does `p` carry the tag of handle values (bits 63-60: 0xA)? */
static inline int fl_handle_is_light(const void* p)
{
    return (uintptr_t)p >> 60 == 0xA;
}
/** The light userdata value of slot `s`: tag, context, index, generation. */
static inline void* fl_handle_value(const fl_steps* s)
{
    const fl_hslot* h = (const fl_hslot*)s;
    return (void*)(((uintptr_t)h->hi << 32) | h->gen);
}
/** The context whose number value `p` (a handle value) carries, or NULL. */
static inline fl_ctx* fl_handle_ctx_of(const void* p)
{
    return atomic_load_explicit(&fl_handle_ctx[((uintptr_t)p >> 52) & 0xFFu],
                                memory_order_relaxed);
}
/** The slot of value `p` (the ghost if it moved on), NULL if not ours. */
static inline fl_steps* fl_handle_decode(const void* p)
{
    uintptr_t v = (uintptr_t)p;
    uint32_t idx = (uint32_t)(v >> 32) & 0xFFFFFu;
    fl_ctx* ctx = atomic_load_explicit(&fl_handle_ctx[(v >> 52) & 0xFFu],
                                       memory_order_relaxed);
    fl_hslot* h;
    if (!ctx || idx >= ctx->nhslots) {
        return NULL;
    }
    h = &ctx->hchunks[idx / FL_HANDLE_CHUNK][idx % FL_HANDLE_CHUNK];
    return h->gen == (uint32_t)v ? &h->s : &ctx->ghost;
}
#else /* no room for the encoding: step handles are full userdata */
#define FL_HANDLE_BITS 0
static inline fl_ctx* fl_handle_ctx_of(const void* p) { (void)p; return NULL; }
static inline int fl_handle_is_light(const void* p) { (void)p; return 0; }
static inline void* fl_handle_value(const fl_steps* s) { (void)s; return NULL; }
static inline fl_steps* fl_handle_decode(const void* p) { (void)p; return NULL; }
#endif

/** The handle object at `idx`, or NULL. lua_touserdata() is NULL for
 *  anything but userdata; a light userdata carrying the handle tag is
 *  decoded (lua_handle.c), and lua_rawlen() is 0 for any other light
 *  userdata: two calls tell a full userdata of our size. */
static inline fl_steps* fl_to_steps(lua_State* L, int idx)
{
    fl_steps* s = lua_touserdata(L, idx);
    if (!s) {
        return NULL;
    }
    if (fl_handle_is_light(s)) {
        return fl_handle_decode(s);
    }
    if (lua_rawlen(L, idx) != sizeof(fl_steps)) {
        return NULL;
    }
    return s->magic == &fl_steps_magic ? s : NULL;
}
/** Raise "expected an AsyncSteps handle as self" for argument `idx`. */
int fl_not_steps(lua_State* L, int idx, const char* what);
/** Give the runtime the success() that the call of step handle `s` kept
 *  (FL_F_KEPT; lua_trampoline.c). Never raises. */
void fl_kept_flush(fl_steps* s);
/** The handle object at `idx`, or a Lua error naming `what`. Every method
 *  but success()'s fast path takes its handle here, so a kept success()
 *  reaches the runtime before anything else done through the handle. */
static inline fl_steps* fl_check_steps(lua_State* L, int idx, const char* what)
{
    fl_steps* s = fl_to_steps(L, idx);
    if (!s) {
        fl_not_steps(L, idx, what);
    }
    if (s->flags & FL_F_KEPT) {
        fl_kept_flush(s);
    }
    return s;
}

int fl_steps_tostring(lua_State* L);

int fl_add(lua_State* L, fl_steps* s, int fn, int eh);
int fl_parallel(lua_State* L, fl_steps* s, int eh);
int fl_add_native(lua_State* L);   /* %native: asi:add(step [, onerror]) */
/** Push a new table for the methods of roots and step handles, holding
 *  add and success (lua_ctx.c). Every `asi:success(v)` and `root:add(f)`
 *  looks its method up there (luaH_get, after the metatable's __index):
 *  the lookup reads the key's main position, then follows its chain. The
 *  table is made with room for every method (FL_METHODS_SIZE: no rehash
 *  while the Lua layer fills it) and these two go in first, so each stays
 *  at its main position, the first node looked at, under any string hash
 *  seed (a key put in later that collides is chained after it). Filled
 *  key by key into an empty table instead, they land wherever the last
 *  rehash put them: 0, 1 or 2 more nodes to follow, by seed. */
void fl_methods_new(lua_State* L);
/** Room for the methods (steps.lua and the parts after it put 57). */
#define FL_METHODS_SIZE 64
int fl_set_timeout(lua_State* L, fl_steps* s, lua_Number ms);
int fl_set_cancel(lua_State* L, fl_steps* s, int fn);
int fl_wait_external(lua_State* L, fl_steps* s);
int fl_loop(lua_State* L, fl_steps* s, int fn, int label);
int fl_repeat(lua_State* L, fl_steps* s, lua_Integer count, int fn, int label);
int fl_break(lua_State* L, fl_steps* s, int label, int cont);
int fl_sync(lua_State* L, fl_steps* s, uintptr_t sync, int fn, int eh);
int fl_root_id(lua_State* L, fl_steps* s);
int fl_is_valid(lua_State* L, fl_steps* s);
int fl_status(lua_State* L, fl_steps* s);
int fl_binary(lua_State* L, fl_steps* s);
int fl_tool_of(lua_State* L, fl_steps* s);
int fl_add_foreign(lua_State* L, fl_steps* s, const char* language,
                   const char* module, const char* function);
int fl_add_as(lua_State* L, fl_steps* s, int fn, int eh, const char* name,
              const char* file, lua_Integer line);
/** The trampoline of a step (a record with a function in FL_A_FN;
 *  lua_trampoline.c). */
void fl_tr_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args);

/* ---- completing a step (lua_complete.c) ---------------------------------- */

int fl_success(lua_State* L);      /* %native: asi:success(...) */
int fl_success_step(lua_State* L); /* %native: asi:success_step(...) */
int fl_error(lua_State* L, fl_steps* s, int code, int info);
int fl_fail(lua_State* L, fl_steps* s, int err, int tb);

/* ---- roots (lua_root.c) -------------------------------------------------- */

int fl_steps_gc(lua_State* L);
int fl_root_new(lua_State* L, fl_tool* t, int tool_idx);
int fl_wrap(lua_State* L, void* address, int owned);
int fl_execute(lua_State* L, fl_steps* s, int fn, int done);
int fl_result(lua_State* L, fl_steps* s);
int fl_root_tool(lua_State* L, fl_steps* s);
int fl_cancel(lua_State* L, fl_steps* s);
int fl_free(lua_State* L, fl_steps* s);

/* ---- state() tables, shared state, the last error (lua_state.c) ---------- */

/** Make the metatable of state() tables (fl_ctx_open). */
void fl_state_open(lua_State* L, fl_ctx* ctx);
int fl_state_names(lua_State* L); /* %native _state_names(t) */
int fl_state_mt(lua_State* L);    /* %native _state_mt() */
int fl_state_keys(lua_State* L);  /* %native _state_keys() */
int fl_state(lua_State* L, fl_steps* s);
int fl_shared_get(lua_State* L, fl_steps* s, const char* name);
int fl_shared_set(lua_State* L, fl_steps* s, const char* name, int value);
int fl_error_info(lua_State* L, fl_steps* s);
int fl_last_exception(lua_State* L, fl_steps* s);
int fl_async_stack(lua_State* L, fl_steps* s);
/** Push the frames of `st` as a Lua list (nil for NULL). */
void fl_push_async_stack(lua_State* L, const futoin_async_stack* st);

/* ---- the language host "lua" (host/lua_host.c) ---------------------------- */

/** Offer this state as the host of language "lua" on its thread (luaopen):
 *  a thread's host state is the oldest still open there; a thread without
 *  one gets a new state when a Lua step is resolved there. */
void fl_host_open(lua_State* L, fl_ctx* ctx);
/** The context of the Lua code calling futoin_host_add() on this thread
 *  right now (add_foreign()), or NULL: Lua steps it adds by name are
 *  resolved in its own state. */
extern _Thread_local fl_ctx* fl_host_caller;
/** The state of `ctx` is closing. */
void fl_host_close(fl_ctx* ctx);

/* ---- tool (lua_tool.c) --------------------------------------------------- */

/** How a Tool object relates to its futoin_tool. */
enum
{
    FL_TOOL_OWN = 0,      /* made by Tool(): its own loop, Tool:run() drives it */
    FL_TOOL_ATTACHED = 1, /* made by Tool{}: on someone else's loop (luv's) */
    FL_TOOL_BORROWED = 2  /* the tool of a flow this state did not make
                           * (asi:tool() in a flow another language hosts):
                           * never freed here */
};

struct fl_tool
{
    const void* magic; /* &fl_tool_magic */
    futoin_tool* tool; /* NULL once closed */
    fl_ctx* ctx;
    int attached;      /* FL_TOOL_* */
    int exec_ref;      /* registry ref: {lightuserdata(root) = root} */
    struct fl_timer* timers; /* scheduled Lua callbacks */
    /* FL_TOOL_BORROWED: what proves the tool is alive (lua_tool.c) */
    long roots;        /* live roots made on it from Lua */
    int in_cb;         /* a timer of it is running its Lua callback */
    FutoInAsyncSteps* anchor; /* an idle root kept while timers are pending */
    int self_ref;      /* registry ref of the object while timers are pending */
    /* FL_TOOL_BORROWED: collecting the roots Lua made on it (lua_tool.c) */
    int sweep;         /* a collection is scheduled (sweep_h) */
    FutoInHandle sweep_h;
    int sweep_budget;  /* collections left since a root of it stopped */
    int sweep_listed;  /* in ctx->sweepers */
    fl_tool* sweep_next;
    int hooks_ref;     /* registry ref of set_hooks{}'s table, or 0 (lua_watch.c) */
};

extern const char fl_tool_magic;

fl_tool* fl_check_tool(lua_State* L, int idx, const char* what);
/** The futoin_tool of `t`, or a Lua error naming `what` (closed; or a
 *  borrowed tool used where nothing proves it is alive). */
futoin_tool* fl_tool_get(lua_State* L, fl_tool* t, const char* what);
/** The same, without raising: NULL where fl_tool_get() would raise. */
futoin_tool* fl_tool_peek(fl_tool* t);
/** Push the Tool object of `ft` (made for a tool this state did not
 *  make: FL_TOOL_BORROWED), the same object each time while it lives. */
void fl_tool_push_of(lua_State* L, fl_ctx* ctx, futoin_tool* ft);
int fl_tool_new(lua_State* L, void* uv_loop, int attached, int virtual_time);
int fl_tool_new_luv(lua_State* L, const char* luv_path);
int fl_tool_gc(lua_State* L);
int fl_tool_tostring(lua_State* L);
int fl_tool_close(lua_State* L, fl_tool* t);
int fl_tool_run(lua_State* L, fl_tool* t);
int fl_tool_run_nowait(lua_State* L, fl_tool* t);
/* Virtual time: Tool:advance(ms), Tool:next_due() (ms or nil), Tool:now()
 * (the tool's clock, ms). */
int fl_tool_advance(lua_State* L, fl_tool* t, lua_Number ms);
int fl_tool_next_due(lua_State* L, fl_tool* t);
int fl_tool_now(lua_State* L, fl_tool* t);
/* lua_watch.c: tool:set_hooks{...} / tool:dump(); drop_hooks when the tool
 * is freed. */
int fl_tool_set_hooks(lua_State* L, fl_tool* t, int table);
int fl_tool_dump(lua_State* L, fl_tool* t);
void fl_tool_drop_hooks(fl_tool* t);
int fl_tool_schedule(lua_State* L, fl_tool* t, lua_Number delay_ms, int fn,
                     int deferred);
int fl_timer_cancel(lua_State* L);
int fl_timer_pending(lua_State* L);
int fl_tool_uv_loop(lua_State* L, fl_tool* t);
int fl_tool_executing(lua_State* L, fl_tool* t);
/** A root made on borrowed tool `t` stopped: schedule a full collection
 *  on that tool's loop (an immediate), so that the root, once nothing of
 *  Lua refers to it, is freed before that program's loop goes idle and the
 *  program can free its tool (lua_tool.c). Never raises. */
void fl_tool_sweep_soon(fl_tool* t);
/** A record of `ctx` was released: tools whose last collection left roots
 *  behind get another one (ctx->sweepers is not empty). Never raises. */
void fl_tool_sweep_again(fl_ctx* ctx);
/** Keep root object at `idx` alive while it executes / stop doing so. */
void fl_tool_keep(lua_State* L, fl_tool* t, int idx, fl_steps* s);
void fl_tool_drop(lua_State* L, fl_tool* t, fl_steps* s);

/* ---- the load policy (lua_policy.c) --------------------------------------- */

/** futoin_host_policy_set() of `t` / of the process with the lists at
 *  `languages` and `modules` (nil: all; checked by the Lua layer):
 *  pushes the library's result code. A borrowed or closed `t` raises. */
int fl_tool_policy_set(lua_State* L, fl_tool* t, int languages, int modules);
int fl_policy_set(lua_State* L, int languages, int modules);

#endif
