/*
 * The Tool of the Lua binding: one futoin_tool (one libuv loop), owned and
 * driven by Tool:run(), or attached to luv's loop so that one uv.run()
 * drives luv's timers and sockets and our steps.
 *
 * luv. Lua loads C modules with RTLD_LOCAL, so luv's exported C API
 * (luv_loop() in <luv/luv.h>) is not visible to us by symbol lookup. We
 * take the file require("luv") loaded (package.searchpath, given by the
 * Lua layer) and open it with RTLD_NOLOAD: that returns the copy already in
 * the process, or fails, so a second luv is never loaded; luv_loop() of
 * that copy gives the uv_loop_t* of this Lua state. luv is built against
 * the system libuv (libuv.so.1), as libfutoin_async is: one libuv in the
 * process. Nothing links luv.
 *
 * Executing roots are kept alive by their tool in a Lua table
 * {lightuserdata(root) = root}, so a root the program dropped still runs
 * to its end.
 *
 * The Tool of a step (asi:tool()). Every Tool object is listed by its
 * futoin_tool* in a weak table of the context, so a step finds the object
 * of the tool its flow runs on. A flow this state did not make (Lua steps
 * in a flow of a C, Python or Java program, through the host plug-in) runs
 * on a tool of that program: the step gets a "borrowed" Tool object for
 * it, never freed here. Nothing tells us when that program frees its
 * tool, so a borrowed object is only used while something proves the tool
 * alive: a Lua callback of a flow or timer of it is running, or roots made
 * on it from Lua live (a tool with live roots cannot be freed); while its
 * timers are pending it keeps an idle root of that tool (so the program
 * cannot free the tool under them) and its own object alive. Otherwise
 * its methods raise instead of touching a tool that may be gone. Timers (immediate/deferred Lua callbacks) are C records in a
 * list on the tool holding a reference to the function; the Timer object
 * returned to Lua holds the record's handle and can cancel it.
 */
#include "futoin_lua.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char fl_tool_magic = 0;

typedef struct fl_timer
{
    fl_tool* tool;
    FutoInHandle h;
    int fn; /* reference of the Lua callback */
    struct fl_timer* prev;
    struct fl_timer* next;
} fl_timer;

/* What Tool:immediate()/deferred() return. */
typedef struct fl_timer_obj
{
    fl_timer* t;   /* valid while the handle is (checked through the tool) */
    FutoInHandle h;
    fl_tool* tool; /* anchored as the object's user value */
} fl_timer_obj;

static fl_tool* to_tool(lua_State* L, int idx)
{
    fl_tool* t;
    if (lua_type(L, idx) != LUA_TUSERDATA || lua_rawlen(L, idx) != sizeof(fl_tool)) {
        return NULL;
    }
    t = lua_touserdata(L, idx);
    return t->magic == &fl_tool_magic ? t : NULL;
}

fl_tool* fl_check_tool(lua_State* L, int idx, const char* what)
{
    fl_tool* t = to_tool(L, idx);
    if (!t) {
        luaL_error(L, "%s: expected a Tool, got %s", what, luaL_typename(L, idx));
    }
    return t;
}

futoin_tool* fl_tool_peek(fl_tool* t)
{
    fl_ctx* ctx = t->ctx;
    if (!t->tool || t->attached != FL_TOOL_BORROWED) {
        return t->tool;
    }
    if (t->roots > 0 || t->in_cb > 0 || t->anchor) {
        return t->tool;
    }
    /* a Lua callback of a flow of that tool is running */
    if (ctx->cur_bsi && futoin_async_ext(ctx->cur_bsi)
        && futoin_async_tool(ctx->cur_bsi) == t->tool) {
        return t->tool;
    }
    return NULL;
}

futoin_tool* fl_tool_get(lua_State* L, fl_tool* t, const char* what)
{
    futoin_tool* ft = fl_tool_peek(t);
    if (!ft) {
        if (!t->tool) {
            luaL_error(L, "%s: the Tool is closed", what);
        }
        luaL_error(L, "%s: this Tool is the loop of the program that hosts "
                      "this Lua state: usable only while Lua code of a flow or "
                      "timer of it runs, or while roots made on it live", what);
    }
    return ft;
}

static fl_tool* live_tool(lua_State* L, fl_tool* t, const char* what)
{
    fl_tool_get(L, t, what);
    return t;
}

/* The Tool object of `ft` is at the top: list it / stop listing it. */
static void tool_list(lua_State* L, fl_ctx* ctx, futoin_tool* ft, int on)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->tools_ref);
    lua_pushlightuserdata(L, ft);
    if (on) {
        lua_pushvalue(L, -3);
    } else {
        lua_pushnil(L);
    }
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Push a new Tool object over `ft` (NULL: made by the caller). */
static fl_tool* tool_push(lua_State* L, fl_ctx* ctx, int attached)
{
    fl_tool* t = lua_newuserdatauv(L, sizeof(*t), 1);
    memset(t, 0, sizeof(*t));
    t->magic = &fl_tool_magic;
    t->ctx = ctx;
    t->exec_ref = LUA_NOREF;
    t->self_ref = LUA_NOREF;
    t->attached = attached;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[FL_MT_TOOL]);
    lua_setmetatable(L, -2);
    lua_newtable(L); /* executing roots */
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, -3, 1);
    t->exec_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* per tool: not counted */
    return t;
}

int fl_tool_new(lua_State* L, void* uv_loop, int attached, int virtual_time)
{
    fl_ctx* ctx = fl_ctx_get(L);
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    fl_tool* t = tool_push(L, ctx, attached);
    o.uv_loop = uv_loop;
    o.virtual_time = virtual_time != 0;
    o.misuse = fl_on_misuse;
    o.misuse_data = ctx;
    if (futoin_tool_new(&t->tool, &o) != FUTOIN_OK) {
        t->tool = NULL;
        return luaL_error(L, "Tool(): futoin_tool_new() failed");
    }
    tool_list(L, ctx, t->tool, 1);
    return 1;
}

void fl_tool_push_of(lua_State* L, fl_ctx* ctx, futoin_tool* ft)
{
    fl_tool* t;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->tools_ref);
    lua_pushlightuserdata(L, ft);
    if (lua_rawget(L, -2) == LUA_TUSERDATA) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 2);
    t = tool_push(L, ctx, FL_TOOL_BORROWED);
    t->tool = ft;
    tool_list(L, ctx, ft, 1);
}

typedef void* (*luv_loop_fn)(lua_State* L);

int fl_tool_new_luv(lua_State* L, const char* luv_path)
{
    void* h;
    luv_loop_fn fn = NULL;
    void* loop;
    /* luv loaded with RTLD_GLOBAL (or linked into the host) */
    *(void**)&fn = dlsym(RTLD_DEFAULT, "luv_loop");
    if (!fn) {
        h = dlopen(luv_path, RTLD_NOW | RTLD_NOLOAD);
        if (!h) {
            return luaL_error(L, "Tool{loop = \"luv\"}: luv is not loaded from "
                                 "%s (require \"luv\" first)", luv_path);
        }
        *(void**)&fn = dlsym(h, "luv_loop");
        dlclose(h); /* only drops the count NOLOAD took */
        if (!fn) {
            return luaL_error(L, "Tool{loop = \"luv\"}: %s has no luv_loop()",
                              luv_path);
        }
    }
    loop = fn(L);
    if (!loop) {
        return luaL_error(L, "Tool{loop = \"luv\"}: luv has no loop");
    }
    return fl_tool_new(L, loop, 1, 0);
}

/* ---- timers ---------------------------------------------------------------- */

static void timer_unlink(fl_timer* tm)
{
    fl_tool* t = tm->tool;
    if (tm->prev) {
        tm->prev->next = tm->next;
    } else {
        t->timers = tm->next;
    }
    if (tm->next) {
        tm->next->prev = tm->prev;
    }
}

static int timer_body(lua_State* L)
{
    int ref = (int)lua_tointeger(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    lua_call(L, 0, 0);
    return 0;
}

/* A borrowed tool with pending timers keeps an idle root of its tool (so
 * that its program cannot free the tool under them) and its own object
 * (so that the timers are not dropped with it); the last timer lets go.
 * Never raises. */
static void borrowed_timers(lua_State* L, fl_tool* t, int idx)
{
    if (t->attached != FL_TOOL_BORROWED) {
        return;
    }
    if (t->timers && !t->anchor && t->tool) {
        t->anchor = futoin_root_new(t->tool);
        if (L && idx && t->self_ref == LUA_NOREF && lua_checkstack(L, 1)) {
            lua_pushvalue(L, idx);
            t->self_ref = fl_ref(L, t->ctx);
        }
    } else if (!t->timers && t->anchor) {
        FutoInAsyncSteps* a = t->anchor;
        int ref = t->self_ref;
        t->anchor = NULL;
        t->self_ref = LUA_NOREF;
        a->api->free(a);
        fl_unref(t->ctx, ref); /* may let the object go: the last use of t */
    }
}

/* A Lua timer fired: no flow can take its errors, they are printed. */
static void tr_timer(void* data)
{
    fl_timer* tm = data;
    fl_tool* t = tm->tool;
    fl_ctx* ctx = t->ctx;
    int ref = tm->fn;
    timer_unlink(tm);
    free(tm);
    if (!ctx->closed) {
        lua_State* L = fl_ctx_state(ctx);
        if (lua_checkstack(L, 6)) {
            int top = lua_gettop(L);
            lua_pushcfunction(L, fl_msgh);
            lua_pushcfunction(L, timer_body);
            lua_pushinteger(L, ref);
            ++t->in_cb; /* the tool is alive: it runs this */
            if (lua_pcall(L, 1, 0, top + 1) != LUA_OK) {
                fprintf(stderr, "futoin_async: error in a Tool timer callback: %s\n",
                        lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
                lua_pushboolean(L, 0);
                lua_rawseti(L, LUA_REGISTRYINDEX, ctx->err_slot);
            }
            --t->in_cb;
            lua_settop(L, top);
        }
    }
    fl_unref(ctx, ref);
    borrowed_timers(NULL, t, 0);
}

int fl_tool_schedule(lua_State* L, fl_tool* t, lua_Number delay_ms, int fn,
                     int deferred)
{
    const char* what = deferred ? "deferred(ms, fn)" : "immediate(fn)";
    fl_timer_obj* o;
    fl_timer* tm;
    uint32_t ms = 0;
    live_tool(L, t, what);
    if (!futoin_tool_is_same_thread(t->tool)) {
        return luaL_error(L, "%s: not on the tool's loop thread", what);
    }
    if (deferred) {
        if (!(delay_ms >= 0)) {
            return luaL_error(L, "%s: ms must be >= 0", what);
        }
        ms = delay_ms >= (lua_Number)UINT32_MAX ? UINT32_MAX : (uint32_t)ceil(delay_ms);
    }
    if (!lua_isfunction(L, fn)) {
        if (luaL_getmetafield(L, fn, "__call") == LUA_TNIL) {
            return luaL_error(L, "%s: fn must be a function, got %s", what,
                              luaL_typename(L, fn));
        }
        lua_pop(L, 1);
    }
    o = lua_newuserdatauv(L, sizeof(*o), 1);
    memset(o, 0, sizeof(*o));
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->ctx->mt[FL_MT_TIMER]);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    tm = malloc(sizeof(*tm));
    if (!tm) {
        return luaL_error(L, "%s: out of memory", what);
    }
    lua_pushvalue(L, fn);
    tm->fn = fl_ref(L, t->ctx);
    tm->tool = t;
    tm->prev = NULL;
    tm->next = t->timers;
    if (t->timers) {
        t->timers->prev = tm;
    }
    t->timers = tm;
    if (deferred) {
        tm->h = futoin_tool_deferred(t->tool, ms, tr_timer, tm);
    } else {
        tm->h = futoin_tool_immediate(t->tool, tr_timer, tm);
    }
    if (!futoin_tool_is_valid(t->tool, &tm->h)) {
        timer_unlink(tm);
        fl_unref(t->ctx, tm->fn);
        free(tm);
        return luaL_error(L, "%s: refused by the tool", what);
    }
    borrowed_timers(L, t, 1);
    o->t = tm;
    o->h = tm->h;
    o->tool = t;
    return 1;
}

static fl_timer_obj* check_timer(lua_State* L)
{
    fl_ctx* ctx = fl_ctx_get(L);
    fl_timer_obj* o = NULL;
    if (lua_type(L, 1) == LUA_TUSERDATA && lua_getmetatable(L, 1)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[FL_MT_TIMER]);
        if (lua_rawequal(L, -1, -2)) {
            o = lua_touserdata(L, 1);
        }
        lua_pop(L, 2);
    }
    if (!o) {
        luaL_error(L, "expected a Timer (what Tool:immediate()/deferred() "
                      "return), got %s", luaL_typename(L, 1));
    }
    return o;
}

/* Timer:cancel() -> true if it was still pending. */
int fl_timer_cancel(lua_State* L)
{
    fl_timer_obj* o = check_timer(L);
    fl_tool* t = o->tool;
    fl_timer* tm = o->t;
    if (!tm || !t || !fl_tool_peek(t) || !futoin_tool_is_valid(t->tool, &o->h)) {
        o->t = NULL;
        lua_pushboolean(L, 0);
        return 1;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        return luaL_error(L, "Timer:cancel(): not on the tool's loop thread");
    }
    /* valid handle: the record is alive (freed only when it fires or here) */
    futoin_tool_cancel(t->tool, &tm->h);
    timer_unlink(tm);
    fl_unref(t->ctx, tm->fn);
    free(tm);
    o->t = NULL;
    borrowed_timers(L, t, 0);
    lua_pushboolean(L, 1);
    return 1;
}

int fl_timer_pending(lua_State* L)
{
    fl_timer_obj* o = check_timer(L);
    lua_pushboolean(L, o->t && o->tool && fl_tool_peek(o->tool)
                               && futoin_tool_is_valid(o->tool->tool, &o->h));
    return 1;
}

static void drop_timers(fl_tool* t)
{
    fl_timer* tm;
    while ((tm = t->timers) != NULL) {
        t->timers = tm->next;
        futoin_tool_cancel(t->tool, &tm->h);
        fl_unref(t->ctx, tm->fn);
        free(tm);
    }
}

/* ---- roots made on a borrowed tool ------------------------------------------- */

/* Roots a Lua step made on the tool of the program hosting this state
 * (asi:new_instance(), fa.AsyncSteps(asi:tool())) keep that tool busy
 * (futoin_tool_free() says EBUSY) until the collector frees them, which
 * may be long after the program's loop went idle: the program could not
 * free its tool. So when such a root stops, a full collection runs from an
 * immediate of that tool, while its loop still runs. The step that made
 * the root usually still holds it then (a closure anchored by the step's
 * record, e.g. its cancel handler): if roots are left, the tool is listed
 * in ctx->sweepers and the release of a record of this state schedules
 * the next collection. At most FL_SWEEPS per stopped root: a root the
 * program keeps costs no more. */
enum { FL_SWEEPS = 3 };

static void sweep_unlist(fl_tool* t)
{
    if (t->sweep_listed) {
        fl_tool** p = &t->ctx->sweepers;
        while (*p != t) {
            p = &(*p)->sweep_next;
        }
        *p = t->sweep_next;
        t->sweep_listed = 0;
    }
}

static void tr_sweep(void* data)
{
    fl_tool* t = data;
    fl_ctx* ctx = t->ctx;
    t->sweep = 0;
    if (ctx->closed || t->roots <= 0 || t->sweep_budget <= 0) {
        return;
    }
    --t->sweep_budget;
    if (!t->sweep_listed) {
        /* taken off by its __gc if the collection frees it */
        t->sweep_listed = 1;
        t->sweep_next = ctx->sweepers;
        ctx->sweepers = t;
    }
    lua_gc(fl_ctx_state(ctx), LUA_GCCOLLECT); /* `t` may be gone now */
}

static void sweep_schedule(fl_tool* t)
{
    if (!t->sweep && t->tool) {
        t->sweep_h = futoin_tool_immediate(t->tool, tr_sweep, t);
        t->sweep = futoin_tool_is_valid(t->tool, &t->sweep_h);
    }
}

void fl_tool_sweep_soon(fl_tool* t)
{
    if (t->attached == FL_TOOL_BORROWED && t->roots > 0 && !t->ctx->closed) {
        t->sweep_budget = FL_SWEEPS;
        sweep_schedule(t);
    }
}

void fl_tool_sweep_again(fl_ctx* ctx)
{
    fl_tool* t;
    if (ctx->closed) {
        return;
    }
    while ((t = ctx->sweepers) != NULL) {
        ctx->sweepers = t->sweep_next;
        t->sweep_listed = 0;
        if (t->roots > 0 && t->sweep_budget > 0 && fl_tool_peek(t)) {
            sweep_schedule(t);
        }
    }
}

/* ---- life cycle -------------------------------------------------------------- */

/* Free the tool (a borrowed one: only let go of it); the object is on
 * top of the stack of L (NULL when the state closes). */
static int tool_free(lua_State* L, fl_tool* t)
{
    int rc;
    futoin_tool* ft = t->tool;
    if (!ft) {
        return FUTOIN_OK;
    }
    drop_timers(t);
    if (t->sweep) {
        futoin_tool_cancel(ft, &t->sweep_h);
        t->sweep = 0;
    }
    sweep_unlist(t);
    if (t->attached == FL_TOOL_BORROWED) {
        borrowed_timers(NULL, t, 0);
        rc = FUTOIN_OK;
    } else {
        rc = futoin_tool_free(ft);
    }
    if (rc == FUTOIN_OK) {
        t->tool = NULL;
        fl_tool_drop_hooks(t);
        if (L && !t->ctx->closed && lua_checkstack(L, 4)) {
            tool_list(L, t->ctx, ft, 0);
        }
    }
    return rc;
}

int fl_tool_gc(lua_State* L)
{
    fl_tool* t = to_tool(L, 1);
    if (!t) {
        return 0;
    }
    /* Roots keep their tool alive, and finalizers run newest first, so a
     * tool that is collected has no root left; EBUSY (a root of another
     * owner) leaks the tool rather than freeing it under that root. */
    if (tool_free(L, t) != FUTOIN_OK) {
        fprintf(stderr, "futoin_async: a Tool was collected while roots of "
                        "it are still alive; it is not freed\n");
        t->tool = NULL;
    }
    if (t->exec_ref != LUA_NOREF && !t->ctx->closed) {
        luaL_unref(L, LUA_REGISTRYINDEX, t->exec_ref);
        t->exec_ref = LUA_NOREF;
    }
    return 0;
}

int fl_tool_tostring(lua_State* L)
{
    fl_tool* t = to_tool(L, 1);
    if (!t || !t->tool) {
        lua_pushliteral(L, "futoin_async.Tool (closed)");
    } else {
        lua_pushfstring(L, "futoin_async.Tool (%p%s)", (void*)t->tool,
                        t->attached == FL_TOOL_BORROWED ? ", borrowed"
                        : t->attached                   ? ", attached"
                                                        : "");
    }
    return 1;
}

int fl_tool_close(lua_State* L, fl_tool* t)
{
    int rc;
    if (!t->tool) {
        return 0;
    }
    if (t->attached == FL_TOOL_BORROWED && !fl_tool_peek(t)) {
        tool_free(L, t); /* no timers: nothing of the tool to touch */
        return 0;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        return luaL_error(L, "Tool:close(): not on the tool's loop thread");
    }
    lua_settop(L, 1);
    rc = tool_free(L, t);
    if (rc == FUTOIN_EBUSY) {
        /* roots nobody refers to any more may still await collection */
        lua_gc(L, LUA_GCCOLLECT);
        rc = tool_free(L, t);
    }
    if (rc != FUTOIN_OK) {
        return luaL_error(L, "Tool:close(): roots of this tool are still alive "
                             "(free() them first)");
    }
    return 0;
}

/* run()/run_nowait(): the calling thread (maybe a coroutine) is the one the
 * trampolines use while the loop runs. */
int fl_tool_run(lua_State* L, fl_tool* t)
{
    fl_ctx* ctx = t->ctx;
    lua_State* saved = ctx->run_L;
    int rc;
    live_tool(L, t, "Tool:run()");
    if (t->attached == FL_TOOL_BORROWED) {
        return luaL_error(L, "Tool:run(): this Tool is the loop of the program "
                             "that hosts this Lua state: that program runs it");
    }
    if (t->attached) {
        return luaL_error(L, "Tool:run(): this Tool runs on another loop "
                             "(luv's): drive it with uv.run()");
    }
    ctx->run_L = L;
    rc = futoin_tool_run(t->tool);
    ctx->run_L = saved;
    if (rc != FUTOIN_OK) {
        return luaL_error(L, "Tool:run(): refused (nested run?)");
    }
    return 0;
}

int fl_tool_run_nowait(lua_State* L, fl_tool* t)
{
    fl_ctx* ctx = t->ctx;
    lua_State* saved = ctx->run_L;
    int rc;
    live_tool(L, t, "Tool:run_nowait()");
    if (t->attached == FL_TOOL_BORROWED) {
        return luaL_error(L, "Tool:run_nowait(): this Tool is the loop of the "
                             "program that hosts this Lua state: that program "
                             "runs it");
    }
    if (t->attached) {
        return luaL_error(L, "Tool:run_nowait(): this Tool runs on another "
                             "loop (luv's): drive it with uv.run()");
    }
    ctx->run_L = L;
    rc = futoin_tool_run_nowait(t->tool);
    ctx->run_L = saved;
    if (rc < 0) {
        return luaL_error(L, "Tool:run_nowait(): refused");
    }
    lua_pushboolean(L, rc > 0);
    return 1;
}

/* ---- virtual time ------------------------------------------------------------ */

/* A Tool this state drives itself: not borrowed, not on luv's loop. */
static void own_loop(lua_State* L, fl_tool* t, const char* what)
{
    live_tool(L, t, what);
    if (t->attached == FL_TOOL_BORROWED) {
        luaL_error(L, "%s: this Tool is the loop of the program that hosts "
                      "this Lua state: that program runs it", what);
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        luaL_error(L, "%s: not on the tool's loop thread", what);
    }
}

int fl_tool_advance(lua_State* L, fl_tool* t, lua_Number ms)
{
    static const char what[] = "Tool:advance(ms)";
    fl_ctx* ctx = t->ctx;
    lua_State* saved = ctx->run_L;
    uint64_t n;
    int rc;
    own_loop(L, t, what);
    if (!futoin_tool_is_virtual(t->tool)) {
        return luaL_error(L, "%s: this Tool runs on the wall clock (make it "
                             "with fa.Tool{ virtual_time = true })", what);
    }
    if (!(ms >= 0) || isinf(ms)) {
        return luaL_error(L, "%s: ms must be a finite number >= 0, got %f", what,
                          (double)ms);
    }
    if (ms >= 18446744073709551616.0
        || (n = (uint64_t)ceil(ms)) > UINT64_MAX - futoin_tool_now(t->tool)) {
        return luaL_error(L, "%s: ms too large for the clock", what);
    }
    if (ctx->run_L || t->in_cb || ctx->cur_bsi) {
        return luaL_error(L, "%s: not from inside the loop (a step, a timer "
                             "callback, or while Tool:run() runs)", what);
    }
    ctx->misuse = 0;
    ctx->run_L = L;
    rc = futoin_tool_advance(t->tool, n);
    ctx->run_L = saved;
    if (rc != FUTOIN_OK) {
        if (ctx->misuse) {
            fl_raise_misuse(L, ctx, what);
        }
        return luaL_error(L, "%s: refused", what);
    }
    return 0;
}

int fl_tool_next_due(lua_State* L, fl_tool* t)
{
    uint64_t ms = 0;
    own_loop(L, t, "Tool:next_due()");
    if (futoin_tool_next_due(t->tool, &ms) != 1) {
        lua_pushnil(L);
    } else {
        lua_pushinteger(L, ms > (uint64_t)LUA_MAXINTEGER ? LUA_MAXINTEGER
                                                          : (lua_Integer)ms);
    }
    return 1;
}

int fl_tool_now(lua_State* L, fl_tool* t)
{
    uint64_t now;
    live_tool(L, t, "Tool:now()");
    if (!futoin_tool_is_same_thread(t->tool)) {
        return luaL_error(L, "Tool:now(): not on the tool's loop thread");
    }
    now = futoin_tool_now(t->tool);
    lua_pushinteger(L, now > (uint64_t)LUA_MAXINTEGER ? LUA_MAXINTEGER
                                                      : (lua_Integer)now);
    return 1;
}

int fl_tool_uv_loop(lua_State* L, fl_tool* t)
{
    live_tool(L, t, "Tool:uv_loop()");
    lua_pushlightuserdata(L, futoin_tool_uv_loop(t->tool));
    return 1;
}

int fl_tool_executing(lua_State* L, fl_tool* t)
{
    lua_Integer n = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->exec_ref);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        ++n;
    }
    lua_pop(L, 1);
    lua_pushinteger(L, n);
    return 1;
}

void fl_tool_keep(lua_State* L, fl_tool* t, int idx, fl_steps* s)
{
    idx = lua_absindex(L, idx);
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->exec_ref);
    lua_pushlightuserdata(L, s);
    lua_pushvalue(L, idx);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Never raises: setting an absent or present key to nil allocates nothing. */
void fl_tool_drop(lua_State* L, fl_tool* t, fl_steps* s)
{
    if (t->exec_ref == LUA_NOREF || !lua_checkstack(L, 4)) {
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->exec_ref);
    lua_pushlightuserdata(L, s);
    lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}
