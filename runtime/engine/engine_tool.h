/* Per-tool state of the step engine, kept in the tool's storage for the
 * layer above (futoin_tool.upper, tool/tool.h). */
#ifndef FUTOIN_RUNTIME_ENGINE_TOOL_H
#define FUTOIN_RUNTIME_ENGINE_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include <futoin/ftn12.h>

#include "tool/tool.h"

/*
 * A pool of fixed-size records carved from blocks that live as long as the
 * tool. The free list is FIFO: a record is reused only once `quarantine`
 * others were freed after it, so a stale handle to a freed record keeps
 * finding it FREE for a while instead of a new owner (see engine.h).
 */
typedef struct futoin__pool
{
    void* head;
    void* tail;
    size_t count;       /* records on the free list */
    size_t quarantine;  /* keep at least this many before reusing */
    size_t size;        /* record size, >= sizeof(void*) */
    size_t per_block;
    size_t link_off;    /* offset of the free-list link in the record */
    void** blocks;
    size_t nblocks;
    size_t cap_blocks;
    size_t live;        /* records handed out */
} futoin__pool;

struct futoin__engine_tool
{
    futoin__pool steps;
    futoin__pool flows;
    futoin__pool args;
    futoin__pool roots;
    size_t live_roots;
    /* Arguments handed to the execute callback that is running now. Steps
     * never run nested, so one scratch per tool is enough. */
    FutoInArgs args_in;
    ptrdiff_t next_root_id;
    /* append cursor of futoin__sub_append(): the step and its queue tail */
    struct futoin__step* app_step;
    struct futoin__step* app_tail;
    uint32_t app_gen;
    uint32_t running; /* flow_run() depth, for reentrancy checks */
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
