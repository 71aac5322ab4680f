/**
 * @file futoin/sys/hooks.h
 * @brief For tools that watch flows run (tracers, profilers, test
 *        recorders): the hooks a tool calls at each event of its flows.
 *
 * A tool holds at most one hook table (futoin_hooks), set with
 * futoin_tool_set_hooks() or the extension table's set_hooks()
 * (futoin/sys/ext.h, version 6). Every member is optional; each is called
 * on the loop thread, synchronously, at the moment the event happens, with
 * the table's `data` and one event record (futoin_hook_event) that is
 * valid for the duration of the call only (copy what you keep).
 *
 * What a hook may do: read (rootId(), futoin_tool_now(), the extension
 * table's error_info/async_stack, futoin_tool_dump()), record, and set or
 * clear the tool's hooks (futoin_tool_set_hooks(): the new table serves
 * from the next event on; the call being made finishes normally). A hook
 * must not change a flow (add steps, complete, cancel or free roots):
 * events are reported from inside the engine's own bookkeeping.
 *
 * With no hooks set, the engine pays one predictable branch per event.
 *
 * Order of the events of one root (each nested as its frames are):
 *
 *     flow_started
 *       step_entered            a step's callback is about to run
 *         error_raised          the step (or its timeout) raised an error
 *         wait_begun            its callback returned and it waits
 *         wait_ended            the wait is over (completed, timed out,
 *                               failed or cancelled)
 *         error_handled         an error handler took the error (success()
 *                               or add() in it)
 *       step_left               the step's frame is gone (done, failed or
 *                               cancelled)
 *     cancel                    the root was cancelled (before its frames
 *                               unwind)
 *     flow_finished             success, an unhandled error, or cancelled
 *
 * `sync_acquired` comes right before the step_entered of the step that an
 * addSync() guards (the flow is in), `sync_released` when the guard
 * releases the object after that step ended. A flow that must queue first
 * runs the object's wait step (a C step of the library), which waits with
 * the kind FUTOIN_WAIT_SYNC.
 *
 * Steps added with parallel() run as flows of their own: their steps are
 * reported as any other, with the same `root`; flow_started and
 * flow_finished are reported for roots only. Events of work begun before
 * the hooks were set are reported from then on (a step_left may come
 * without its step_entered).
 *
 * @since 0.3.0 (extension table version 6)
 */
#ifndef FUTOIN_SYS_HOOKS_H
#define FUTOIN_SYS_HOOKS_H

#include <futoin/async.h>
#include <futoin/sync.h>
#include <futoin/sys/host.h>

#ifdef __cplusplus
extern "C" {
#endif

/** futoin_hook_event.outcome of flow_finished. */
typedef enum futoin_hook_outcome
{
    FUTOIN_HOOK_SUCCESS = 0,  /**< the last step finished */
    FUTOIN_HOOK_ERROR = 1,    /**< an error no handler took; `code` says which */
    FUTOIN_HOOK_CANCELLED = 2 /**< cancel() or free() while it ran */
} futoin_hook_outcome;

/** What a waiting step waits for (futoin_hook_event.wait, and the dump). */
typedef enum futoin_wait_kind
{
    FUTOIN_WAIT_NONE = 0,
    /** Only its own setTimeout() (no waitExternal(), no cancel
     *  handler), in any language: `due` says when. */
    FUTOIN_WAIT_TIMER = 1,
    /** A C step's waitExternal() or cancel handler: a completion from
     *  outside (`due` > 0: a timeout bounds the wait). */
    FUTOIN_WAIT_EXTERNAL = 2,
    /** A sync object's queue (addSync): `sync` is the object. Checked
     *  first. */
    FUTOIN_WAIT_SYNC = 3,
    /** The same wait by a step of another language (its class's origin
     *  language is not "c": a binding's step, a hosted language's):
     *  `language` names it; that language's runtime completes it. */
    FUTOIN_WAIT_FOREIGN = 4
} futoin_wait_kind;

/** futoin_hook_event.type: which hook is called. */
typedef enum futoin_hook_type
{
    FUTOIN_HOOK_FLOW_STARTED = 1,
    FUTOIN_HOOK_FLOW_FINISHED,
    FUTOIN_HOOK_STEP_ENTERED,
    FUTOIN_HOOK_STEP_LEFT,
    FUTOIN_HOOK_ERROR_RAISED,
    FUTOIN_HOOK_ERROR_HANDLED,
    FUTOIN_HOOK_CANCEL,
    FUTOIN_HOOK_WAIT_BEGUN,
    FUTOIN_HOOK_WAIT_ENDED,
    FUTOIN_HOOK_SYNC_ACQUIRED,
    FUTOIN_HOOK_SYNC_RELEASED
} futoin_hook_type;

/**
 * One event. Borrowed: valid during the hook call only. Fields that do not
 * apply to an event are NULL / 0. Versioned by `size`: fields are only
 * added at the end.
 */
typedef struct futoin_hook_event
{
    uint32_t size;  /**< sizeof(futoin_hook_event) of the library */
    uint32_t type;  /**< futoin_hook_type */
    /** The root the event belongs to (its handle; rootId() works). */
    FutoInAsyncSteps* root;
    /** The root's id (rootId()). */
    ptrdiff_t root_id;
    /** step_*, error_*, wait_*, sync_*: the step's handle. For
     *  error_raised of a timeout, the step whose timer fired. Compare it,
     *  do not call through it outside the event. */
    FutoInAsyncSteps* step;
    /** step_*, wait_*: where the step came from, as an async stack names
     *  it (futoin_frame_origin, futoin/sys/host.h): the class's origin of
     *  a binding's step, else the C function, resolved by name. */
    const futoin_frame_origin* origin;
    /** error_*: the error code; flow_finished: the unhandled code. */
    const char* code;
    /** error_raised: error_info, or NULL. */
    const char* info;
    /** flow_finished: futoin_hook_outcome. */
    int outcome;
    /** wait_*: futoin_wait_kind. */
    int wait;
    /** wait_* of FUTOIN_WAIT_SYNC, sync_*: the object. */
    FutoInSync* sync;
    /** wait_* of FUTOIN_WAIT_FOREIGN: the step's language. */
    const char* language;
    /** The tool's time of the event (futoin_tool_now()), ms. */
    uint64_t now;
    /** wait_*: when the step's timeout is due (tool time, ms), or 0. */
    uint64_t due;
} futoin_hook_event;

/** One hook: `data` is futoin_hooks.data. Loop thread. */
typedef void (*futoin_hook_cb)(void* data, const futoin_hook_event* ev);

/** futoin_hooks version 1 (library 0.3.0). */
#define FUTOIN_HOOKS_VERSION_1 1u
#define FUTOIN_HOOKS_VERSION FUTOIN_HOOKS_VERSION_1

/**
 * A tool's hook table: every member optional (NULL: not called). The tool
 * keeps a copy; the caller's table may go once futoin_tool_set_hooks()
 * returns. Fill it as `futoin_hooks h = FUTOIN_HOOKS_INIT;` and set the
 * members you want. Versioned by `size`: members are only added at the end.
 */
typedef struct futoin_hooks
{
    uint32_t size;    /**< sizeof(futoin_hooks) the caller was built with */
    uint32_t version; /**< FUTOIN_HOOKS_VERSION the caller was built with */
    void* data;       /**< passed to every hook */
    futoin_hook_cb flow_started;
    futoin_hook_cb flow_finished;
    futoin_hook_cb step_entered;
    futoin_hook_cb step_left;
    futoin_hook_cb error_raised;
    futoin_hook_cb error_handled;
    futoin_hook_cb cancel;
    futoin_hook_cb wait_begun;
    futoin_hook_cb wait_ended;
    futoin_hook_cb sync_acquired;
    futoin_hook_cb sync_released;
} futoin_hooks;

#define FUTOIN_HOOKS_INIT                                                      \
    {                                                                          \
        sizeof(futoin_hooks), FUTOIN_HOOKS_VERSION, NULL, NULL, NULL, NULL,    \
                NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL                 \
    }

/**
 * The member of `h` that events of `type` call (&h->flow_started for
 * FUTOIN_HOOK_FLOW_STARTED, ..., &h->sync_released), or NULL for a type
 * this header does not know: one mapping from event numbers (and, with
 * futoin_hook_name(), names) to members for the library and the bindings.
 * Inline, so no symbol. @since 0.3.0
 */
static inline futoin_hook_cb* futoin_hooks_member(futoin_hooks* h, int type)
{
    switch (type) {
    case FUTOIN_HOOK_FLOW_STARTED: return &h->flow_started;
    case FUTOIN_HOOK_FLOW_FINISHED: return &h->flow_finished;
    case FUTOIN_HOOK_STEP_ENTERED: return &h->step_entered;
    case FUTOIN_HOOK_STEP_LEFT: return &h->step_left;
    case FUTOIN_HOOK_ERROR_RAISED: return &h->error_raised;
    case FUTOIN_HOOK_ERROR_HANDLED: return &h->error_handled;
    case FUTOIN_HOOK_CANCEL: return &h->cancel;
    case FUTOIN_HOOK_WAIT_BEGUN: return &h->wait_begun;
    case FUTOIN_HOOK_WAIT_ENDED: return &h->wait_ended;
    case FUTOIN_HOOK_SYNC_ACQUIRED: return &h->sync_acquired;
    case FUTOIN_HOOK_SYNC_RELEASED: return &h->sync_released;
    default: return NULL;
    }
}

/**
 * Set the hooks of `tool` (a copy of `hooks` is kept), or clear them
 * (`hooks` NULL). Any time, on the loop thread; from inside a hook too: the
 * new table serves from the next event on.
 * @return FUTOIN_OK; FUTOIN_EINVAL for a NULL tool or a call from another
 *         thread (also reported to the misuse callback); FUTOIN_EVERSION
 *         for a table whose `size` is smaller than version 1's or whose
 *         `version` is 0 (nothing is changed); FUTOIN_ENOMEM.
 * A table from a newer library (larger `size`) is accepted: members this
 * library does not know are ignored.
 * @since 0.3.0
 */
FUTOIN_API int futoin_tool_set_hooks(futoin_tool* tool,
                                     const futoin_hooks* hooks);

/**
 * The names every binding gives a hook event's numbers, one table for all
 * of them (and the dump's `wait=`). Static strings; NULL for a number out
 * of range.
 */
/** futoin_hook_type: its futoin_hooks member name ("flow_started", ...,
 *  "sync_released"). @since 0.3.0 */
FUTOIN_API const char* futoin_hook_name(int type);
/** futoin_hook_outcome: "success", "error" or "cancelled". @since 0.3.0 */
FUTOIN_API const char* futoin_hook_outcome_name(int outcome);
/** futoin_wait_kind: "none", "timer", "external", "sync" or "foreign".
 *  @since 0.3.0 */
FUTOIN_API const char* futoin_wait_kind_name(int kind);

/* ---- Frozen layout ------------------------------------------------------- */

FUTOIN__SASSERT(offsetof(futoin_hooks, data) == 8, "hooks data moved");
FUTOIN__SASSERT(offsetof(futoin_hooks, sync_released)
                        == 8 + 11 * sizeof(void*),
                "hooks v1 layout");
FUTOIN__SASSERT(sizeof(futoin_hooks) == 8 + 12 * sizeof(void*),
                "hooks v1 size");

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_SYS_HOOKS_H */
