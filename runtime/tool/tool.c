/*
 * AsyncTool: one libuv loop, one thread (see tool.h for the layout). This
 * file is the tool's life cycle: creating it on its own loop or on an
 * attached one, running the loop, and tearing it down. The services that
 * share the loop live in a file each, in this folder:
 *  - immediate.c: the ring of immediates, drained in bursts by a uv_idle_t;
 *  - timer.c:     pooled timer entries in a min-heap behind one uv_timer_t;
 *  - clock.c:     the tool's clock, wall or virtual (futoin_tool_advance);
 *  - post.c:      posts from other threads, woken by a uv_async_t;
 *  - slice.c:     the time slice that bounds every burst;
 *  - keepalive.c: which handles keep uv_run() going;
 *  - handle.c:    cancel/is_valid over both kinds of FutoInHandle;
 *  - trim.c:      giving memory back, and trimming on idle;
 *  - misuse.c:    reporting misuse that cannot go into a flow.
 */
#include "tool/internal.h"

#include <stdlib.h>


FUTOIN_API int futoin_tool_is_same_thread(futoin_tool* tool)
{
    return tool && futoin__tool_on_thread(tool);
}

/* ---- lifecycle ----------------------------------------------------------- */

FUTOIN_API int futoin_tool_options_init(
        futoin_tool_options* opts, unsigned version)
{
    static const futoin_tool_options defaults = FUTOIN_TOOL_OPTIONS_INIT;
    if (!opts) {
        return FUTOIN_EINVAL;
    }
    if (version == 1 || version == 2) {
        /* the caller's struct ends after misuse_data (1) or trim_idle_ms
         * (2): nothing past it is written */
        opts->version = version;
        opts->uv_loop = defaults.uv_loop;
        opts->misuse = defaults.misuse;
        opts->misuse_data = defaults.misuse_data;
        if (version == 2) {
            opts->trim_idle_ms = defaults.trim_idle_ms;
        }
        return FUTOIN_OK;
    }
    if (version != FUTOIN_TOOL_OPTIONS_VERSION) {
        return FUTOIN_EVERSION;
    }
    *opts = defaults;
    return FUTOIN_OK;
}

static void free_storage(futoin_tool* tool);

static void on_handle_closed(uv_handle_t* handle)
{
    futoin_tool* tool = handle->data;
    if (++tool->handles_closed == tool->handles_closing && tool->free_on_close) {
        free_storage(tool);
    }
}

/* Close our first `n` handles (idle, timer, async, prepare, trim_timer, in
 * that order).
 * On our own loop, wait for their close callbacks (libuv runs them on the
 * next pass). An attached loop is never run from here: we may be inside
 * its owner's callback (uv_run is not reentrant), and a pass would run the
 * owner's callbacks too: there the storage is freed by the last close
 * callback, when the owner next runs its loop, and true is returned (the
 * caller must not free it, nor touch the tool after that pass). */
static bool close_handles(futoin_tool* tool, unsigned n)
{
    uv_handle_t* handles[5] = {
            (uv_handle_t*)&tool->idle,
            (uv_handle_t*)&tool->timer,
            (uv_handle_t*)&tool->async,
            (uv_handle_t*)&tool->prepare,
            (uv_handle_t*)&tool->trim_timer,
    };
    tool->handles_closed = 0;
    tool->handles_closing = n;
    tool->free_on_close = !tool->owns_loop;
    tool->idle_active = false;
    tool->imm_eager = !tool->lazy;
    tool->timer_armed = false;
    tool->trim_armed = false;
    tool->trim_rearm = false;
    for (unsigned i = 0; i < n; ++i) {
        uv_close(handles[i], on_handle_closed);
    }
    if (tool->free_on_close) {
        return true;
    }
    while (tool->handles_closed < n) {
        uv_run(tool->loop, UV_RUN_NOWAIT);
    }
    return false;
}

static void free_storage(futoin_tool* tool)
{
    for (size_t i = 0; i < tool->timer_nblocks; ++i) {
        free(tool->timer_blocks[i]);
    }
    free(tool->timer_blocks);
    free(tool->heap);
    free(tool->ring);
    free(tool);
}

int futoin__tool_create(futoin_tool** out, const futoin_tool_options* opts,
                        size_t upper_size)
{
    static const futoin_tool_options defaults = FUTOIN_TOOL_OPTIONS_INIT;
    futoin_tool* tool;
    if (!out) {
        return FUTOIN_EINVAL;
    }
    if (!opts) {
        opts = &defaults;
    }
    if (opts->version < 1 || opts->version > FUTOIN_TOOL_OPTIONS_VERSION) {
        return FUTOIN_EVERSION;
    }
    /* A loop that someone else runs keeps its own (wall-clock) time. */
    if (opts->version >= 3 && opts->virtual_time && opts->uv_loop) {
        return FUTOIN_EINVAL;
    }
    tool = calloc(1, sizeof(*tool) + upper_size);
    if (!tool) {
        return FUTOIN_ENOMEM;
    }
    tool->ring = calloc(FUTOIN__IMM_INITIAL_CAP, sizeof(*tool->ring));
    if (!tool->ring) {
        free(tool);
        return FUTOIN_ENOMEM;
    }
    tool->ring_mask = FUTOIN__IMM_INITIAL_CAP - 1;
    tool->slice_stride = FUTOIN__SLICE_FIRST;
    tool->slice_learned = FUTOIN__SLICE_FIRST;
    atomic_init(&tool->remote_head, NULL);
    atomic_init(&tool->loop_shared, false);
    tool->misuse = opts->misuse;
    tool->misuse_data = opts->misuse_data;
    /* fields past those of the caller's version are not there to read */
    tool->trim_idle_ms = opts->version >= 2 ? opts->trim_idle_ms
                                            : FUTOIN_TOOL_TRIM_IDLE_MS_DEFAULT;
    tool->virtual_time = opts->version >= 3 && opts->virtual_time;
    atomic_init(&tool->thread, futoin__thread_key());

    if (opts->uv_loop) {
        tool->loop = opts->uv_loop;
    } else {
        if (uv_loop_init(&tool->own_loop) != 0) {
            free_storage(tool);
            return FUTOIN_ENOMEM;
        }
        tool->loop = &tool->own_loop;
        tool->owns_loop = true;
    }
    tool->run_plain = tool->owns_loop && !tool->virtual_time;
    /* libuv's loop time is the field uv_now() returns (public in uv.h) */
    tool->time_src = tool->virtual_time ? &tool->vnow : &tool->loop->time;
    tool->time_stale = true; /* an attached loop may be mid-turn */

    uv_idle_init(tool->loop, &tool->idle);
    tool->idle.data = tool;
    uv_timer_init(tool->loop, &tool->timer);
    tool->timer.data = tool;
    if (uv_async_init(tool->loop, &tool->async, futoin__tool_async_cb) != 0) {
        if (!close_handles(tool, 2)) {
            if (tool->owns_loop) {
                uv_loop_close(tool->loop);
            }
            free_storage(tool);
        }
        return FUTOIN_ENOMEM;
    }
    tool->async.data = tool;
    /* Remote posts alone do not keep the loop running: only executing
     * flows do (futoin__tool_ref). */
    uv_unref((uv_handle_t*)&tool->async);
    tool->async_refd = false;
    /* Before every poll, apply the lazy handle state (unreferenced: it
     * never keeps the loop alive by itself). */
    uv_prepare_init(tool->loop, &tool->prepare);
    tool->prepare.data = tool;
    tool->lazy = tool->owns_loop;
    tool->imm_eager = !tool->lazy; /* the idle handle is not started */
    if (tool->lazy) {
        uv_prepare_start(&tool->prepare, futoin__tool_prepare_cb);
        uv_unref((uv_handle_t*)&tool->prepare);
    }
    /* Started only after memory grew (futoin__tool_grew); never keeps the
     * loop alive. */
    uv_timer_init(tool->loop, &tool->trim_timer);
    tool->trim_timer.data = tool;
    uv_unref((uv_handle_t*)&tool->trim_timer);

    *out = tool;
    return FUTOIN_OK;
}

static void count_foreign(uv_handle_t* handle, void* arg)
{
    struct
    {
        futoin_tool* tool;
        size_t n;
    }* ctx = arg;
    if (handle != (uv_handle_t*)&ctx->tool->idle
        && handle != (uv_handle_t*)&ctx->tool->timer
        && handle != (uv_handle_t*)&ctx->tool->async
        && handle != (uv_handle_t*)&ctx->tool->prepare
        && handle != (uv_handle_t*)&ctx->tool->trim_timer
        && !uv_is_closing(handle)) {
        ++ctx->n;
    }
}

int futoin__tool_check_free(futoin_tool* tool)
{
    /* From inside our own callback, or while futoin_tool_run is on the
     * stack, the loop would be re-entered and the tool freed under the
     * caller's feet. */
    if (tool->cb_depth != 0 || tool->in_run != 0) {
        futoin__tool_misuse(tool, "futoin_tool_free(): called while running");
        return FUTOIN_EBUSY;
    }
    if (tool->owns_loop) {
        /* The own loop is embedded in the tool: handles a user put on it
         * (through futoin_tool_uv_loop) must be closed first. */
        struct
        {
            futoin_tool* tool;
            size_t n;
        } ctx = {tool, 0};
        uv_walk(tool->loop, count_foreign, &ctx);
        if (ctx.n != 0) {
            futoin__tool_misuse(tool,
                                "futoin_tool_free(): foreign handles still "
                                "open on the tool's own loop");
            return FUTOIN_EBUSY;
        }
    }
    return FUTOIN_OK;
}

int futoin__tool_destroy(futoin_tool* tool)
{
    bool deferred;
    tool->closing = true;
    tool->run_plain = false;
    futoin__tool_posts_drop(tool);
    deferred = close_handles(tool, 5);
    /* A post that raced with closing the async handle is dropped too. */
    futoin__tool_posts_drop(tool);
    if (deferred) {
        return FUTOIN_OK; /* the attached loop's next pass frees the rest */
    }

    if (tool->owns_loop && uv_loop_close(tool->loop) != 0) {
        /* A request (not a handle) is still pending on our loop. Freeing
         * the embedded loop now would be a use after free in libuv, so
         * the tool is leaked deliberately. */
        futoin__tool_misuse(tool, "futoin_tool_free(): loop still busy");
        return FUTOIN_EBUSY;
    }
    free_storage(tool);
    return FUTOIN_OK;
}

/* futoin_tool_run() in general: what its fast path leaves. */
static FUTOIN__NOINLINE int tool_run_slow(futoin_tool* tool)
{
    uintptr_t self = futoin__thread_key();
    if (!tool || !tool->owns_loop || tool->closing || tool->in_run != 0
        || tool->cb_depth != 0) {
        return FUTOIN_EINVAL;
    }
    /* The calling thread becomes the loop thread. Other threads read it
     * (atomically) to decide whether to post their calls. */
    if (atomic_load_explicit(&tool->thread, memory_order_relaxed) != self) {
        atomic_store_explicit(&tool->thread, self, memory_order_relaxed);
    }
    ++tool->in_run;
    if (tool->virtual_time) {
        futoin__tool_vt_run(tool); /* what is due now, never a wait */
        --tool->in_run;
        return FUTOIN_OK;
    }
    /* What is already queued runs before entering libuv: a flow that
     * finishes without waiting (the common case for short roots) then
     * costs no loop turn at all, whose epoll_wait() alone is ~110 ns here.
     * libuv's cached loop time is not refreshed for this (clock_gettime is
     * ~30 ns on this VM); it is marked stale instead, and a timer started
     * by these callbacks refreshes it first (futoin__tool_timer_start).
     * That includes calls other threads posted while no run() was on the
     * stack (idle_cb takes them first): libuv would not look at the async
     * handle of a loop with nothing alive, so a root freed or cancelled
     * from a worker while the loop was idle would wait for unrelated work
     * to come along. */
    if (tool->ring_head != tool->ring_tail || futoin__tool_posts_pending(tool)) {
        tool->time_stale = true;
        futoin__tool_idle_cb(&tool->idle); /* ends with futoin__tool_sync() */
    } else {
        futoin__tool_sync(tool);
    }
    if (uv_loop_alive(tool->loop)) {
        uv_run(tool->loop, UV_RUN_DEFAULT);
    } else {
        /* A uv_stop() from those callbacks ends this run, as uv_run()
         * would have ended (and consumed it): left set, it would end the
         * next run before its first turn (a binding stops its run() so
         * at an interrupt in a step). */
        tool->loop->stop_flag = 0;
    }
    --tool->in_run;
    return FUTOIN_OK;
}

/*
 * The usual call on an owned wall-clock loop, from its own thread, with
 * immediates queued and no post from another thread waiting (a short root
 * that was just executed): the burst that tool_run_slow() would run through
 * the idle handle's callback runs inline here instead, and uv_run() is
 * entered only if something is still alive after it (on a loop never
 * handed out, the tool's own state tells: futoin__tool_own_loop_alive,
 * tool/internal.h). The same callbacks
 * run in the same order: only the calls around them are fewer. While the
 * burst runs, cb_depth refuses reentry (run, run_nowait, free, advance) as
 * in_run would; in_run is set for uv_run(), whose other callbacks (a
 * foreign handle's) are not ours.
 */
FUTOIN_API int futoin_tool_run(futoin_tool* tool)
{
    if (FUTOIN__UNLIKELY(!tool) || FUTOIN__UNLIKELY(!tool->run_plain)
        || FUTOIN__UNLIKELY((tool->in_run | tool->cb_depth) != 0)
        || FUTOIN__UNLIKELY(atomic_load_explicit(&tool->thread,
                                                 memory_order_relaxed)
                            != futoin__thread_key())
        || tool->ring_head == tool->ring_tail
        || FUTOIN__UNLIKELY(futoin__tool_posts_pending(tool))) {
        return tool_run_slow(tool);
    }
    tool->time_stale = true; /* as tool_run_slow() says */
    futoin__tool_burst(tool, true); /* ends with futoin__tool_sync() */
    if (FUTOIN__UNLIKELY(futoin__tool_own_loop_alive(tool))) {
        ++tool->in_run;
        uv_run(tool->loop, UV_RUN_DEFAULT);
        --tool->in_run;
    } else {
        tool->loop->stop_flag = 0; /* as tool_run_slow() says */
    }
    return FUTOIN_OK;
}

FUTOIN_API int futoin_tool_run_nowait(futoin_tool* tool)
{
    int r;
    if (!tool || tool->closing || tool->in_run != 0 || tool->cb_depth != 0) {
        return FUTOIN_EINVAL;
    }
    ++tool->in_run;
    if (tool->virtual_time) {
        r = futoin__tool_vt_pass(tool);
        --tool->in_run;
        return r;
    }
    if (atomic_load_explicit(&tool->remote_head, memory_order_relaxed)) {
        futoin__tool_take_posts(tool); /* as futoin_tool_run() */
    }
    futoin__tool_sync(tool);
    r = uv_run(tool->loop, UV_RUN_NOWAIT);
    --tool->in_run;
    return r != 0 ? 1 : 0;
}

FUTOIN_API void* futoin_tool_uv_loop(futoin_tool* tool)
{
    if (!tool) {
        return NULL;
    }
    /* From now on, futoin_tool_run() asks libuv whether the loop is alive
     * (futoin__tool_own_loop_alive). Tested first: a binding asks for the
     * loop often, and the flag's cache line is the loop thread's. */
    if (!atomic_load_explicit(&tool->loop_shared, memory_order_relaxed)) {
        atomic_store_explicit(&tool->loop_shared, true, memory_order_relaxed);
    }
    return tool->loop;
}
