/* Per-tool state of the step engine, kept in the tool's storage for the
 * layer above (futoin_tool.upper, tool/tool.h). */
#ifndef FUTOIN_RUNTIME_ENGINE_TOOL_H
#define FUTOIN_RUNTIME_ENGINE_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include <futoin/ftn12.h>

#include "engine/recpool.h"
#include "tool/tool.h"


/* Per-tool data of the layer above the engine (the adapter's load policy,
 * adapter/host_policy.c): set at most once, released with the tool. The
 * engine never looks inside; `release` frees it. */
typedef struct futoin__tool_upper
{
    void (*release)(struct futoin__tool_upper* self);
} futoin__tool_upper;

/*
 * What an error or a break/continue needs while it is raised and unwinds
 * in a flow (engine/flow.c). Most flows never raise, so a flow keeps one
 * word for it (futoin__flow.raise, engine.h) and this record comes from
 * the tool's pool when a raise starts and goes back when it ends (issue
 * 22: every waiting flow holds a root, and these were three words and
 * three bytes of it).
 */
typedef struct futoin__raise_rec
{
    const char* code;         /* first: the pool's free-list link */
    struct futoin__step* at;  /* frame to raise `code` at, or NULL */
    struct futoin__step* ctl; /* loop frame of a pending break/continue */
    uint8_t top;              /* raise `code` at whatever is on top */
    uint8_t cont;             /* ctl: 1 = continueLoop, 0 = breakLoop */
    uint8_t owned;            /* `code` is a malloc'd copy */
} futoin__raise_rec;

struct futoin__engine_tool
{
    futoin__recpool steps;  /* step, loop body, unlock: 80 B */
    futoin__recpool frames; /* loop, parallel, addSync frames: 112 B */
    futoin__recpool step_rares; /* futoin__step_rare */
    futoin__recpool flows;
    futoin__recpool args;
    futoin__recpool roots; /* futoin__recpool_live(): the live roots */
    futoin__recpool rares; /* futoin__root_rare: what few roots use */
    futoin__recpool raises; /* futoin__raise_rec: flows raising an error */
    /* The record a raise takes when the pool has none to give (out of
     * memory): the flow that unwinds now (one at a time per tool) keeps
     * its exact code and break/continue target (engine/flow.c). */
    futoin__raise_rec raise_spare;
    uint8_t raise_spare_busy;
    /* Completions dropped because they lost a race against their step's
     * timeout or cancel (remote.c); written from any thread. */
    _Atomic(size_t) late_completions;
    size_t trimmed_bytes; /* given back by futoin_tool_trim() so far */
    /* Arguments handed to the execute callback that is running now. Steps
     * never run nested, so one scratch per tool is enough. */
    FutoInArgs args_in;
    /* A flow's pending values between a success() and the next step: this
     * buffer while free (engine.h futoin__vals_get), else pooled ones. */
    FutoInArgs hot_args;
    uint8_t hot_busy;
    ptrdiff_t next_root_id;
    /* append cursor of futoin__sub_append(): the step and its queue tail */
    struct futoin__step* app_step;
    struct futoin__step* app_tail;
    uint32_t app_gen;
    /* append cursor of a root's level-0 queue (root.c root_append): the
     * flow and its queue's last step. A flow keeps no tail of its own
     * (issue 22, bytes per waiting flow): its queue only grows while the
     * root is not running, by root_append(), which sets this each time. */
    struct futoin__flow* l0_flow;
    struct futoin__step* l0_tail;
    uint32_t running; /* flow_run() depth, for reentrancy checks */
    /* Steps the running flow may still take this turn, for chain(): a
     * chained step counts against the flow's budget like any other. */
    uint32_t chain_budget;
    /* The hooks (futoin/sys/hooks.h; engine/hooks.c), or NULL: every
     * event of the engine tests this one field and calls out of line. */
    const struct futoin_hooks* hooks;
    struct futoin__hooks_copy* hooks_retired; /* replaced inside a hook */
    uint32_t hooks_depth;                     /* hooks on the C stack */
    /* The adapter's data of this tool, or NULL; any thread may set it
     * once (compare-and-swap from NULL) and read it. */
    _Atomic(futoin__tool_upper*) upper;
};

/* The engine's state of `tool`: a fixed offset from the tool, no load. */
static inline struct futoin__engine_tool* futoin__eng(futoin_tool* tool)
{
    return (struct futoin__engine_tool*)(void*)tool->upper;
}

/* pool.c: called by futoin_tool_new() / futoin_tool_free() (engine_tool.c). */
void futoin__engine_tool_init(futoin_tool* tool);
void futoin__engine_tool_close(futoin_tool* tool);

#endif
