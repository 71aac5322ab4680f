/*
 * Posts from other threads. Producers push onto a lock-free Treiber stack
 * and wake the loop through the uv_async_t; the loop thread moves what
 * they pushed to a FIFO of its own and runs it in time slices, taking
 * turns with the immediates, so a flood of posts cannot hold the loop.
 */
#include "tool/internal.h"

#include <stdlib.h>

/*
 * Producers only push and the single consumer only takes the whole stack
 * with an exchange, so there is no ABA problem and no lock: a producer
 * never waits for the loop thread.
 */
void futoin__tool_post_remote(futoin_tool* tool, futoin__remote* node)
{
    futoin__remote* head =
            atomic_load_explicit(&tool->remote_head, memory_order_relaxed);
    do {
        node->next = head;
    } while (!atomic_compare_exchange_weak_explicit(
            &tool->remote_head, &head, node, memory_order_release,
            memory_order_relaxed));
    uv_async_send(&tool->async);
}

/* Move everything posted so far to the end of the loop thread's FIFO, in
 * posting order. Nodes pushed while this runs are taken next time (their
 * producers signal the async handle again). */
static void posts_take(futoin_tool* tool)
{
    futoin__remote* lifo = atomic_exchange_explicit(
            &tool->remote_head, NULL, memory_order_acquire);
    futoin__remote* fifo = NULL;
    futoin__remote* last = lifo; /* the newest becomes the tail */
    while (lifo) {
        futoin__remote* next = lifo->next;
        lifo->next = fifo;
        fifo = lifo;
        lifo = next;
    }
    if (!fifo) {
        return;
    }
    if (tool->posts_last) {
        tool->posts_last->next = fifo;
    } else {
        tool->posts_first = fifo;
    }
    tool->posts_last = last;
}

static void posts_turn_cb(void* data)
{
    futoin_tool* tool = data;
    tool->posts_turn = false;
    futoin__tool_posts_run(tool);
}

/*
 * Run posts in posting order until the time slice is over (futoin__tool_busy:
 * one unit each, as an immediate). What is left gets a turn at the end of
 * the immediate ring, behind what is queued there, as a flow that used up
 * its budget does: a flood of posts takes turns with the loop's own work
 * and with timers and I/O instead of holding the loop until it is gone.
 * If that turn cannot be queued (out of memory), the idle handle stays
 * active while posts wait (futoin__tool_sync) and idle_cb runs them.
 */
void futoin__tool_posts_run(futoin_tool* tool)
{
    futoin__tool_active(tool); /* for trimming on idle */
    if (atomic_load_explicit(&tool->remote_head, memory_order_relaxed)) {
        posts_take(tool);
    }
    while (tool->posts_first) {
        futoin__remote* node = tool->posts_first;
        tool->posts_first = node->next;
        if (!tool->posts_first) {
            tool->posts_last = NULL;
        }
        node->run(node, false); /* frees the node */
        if (futoin__tool_busy(tool, 1)) {
            break;
        }
    }
    if (tool->posts_first && !tool->posts_turn) {
        tool->posts_turn = futoin__tool_imm_push(tool, posts_turn_cb, tool);
    }
}

/* The tool is being freed: every post still queued is dropped (its node
 * freed, nothing called). */
void futoin__tool_posts_drop(futoin_tool* tool)
{
    posts_take(tool);
    while (tool->posts_first) {
        futoin__remote* node = tool->posts_first;
        tool->posts_first = node->next;
        node->run(node, true);
    }
    tool->posts_last = NULL;
}

/* Run what other threads posted, as one of our callbacks. A queued turn
 * of the posts runs them when it comes (see idle_cb). */
void futoin__tool_take_posts(futoin_tool* tool)
{
    if (tool->posts_turn) {
        return;
    }
    ++tool->cb_depth;
    futoin__tool_slice_reset(tool);
    futoin__tool_posts_run(tool);
    --tool->cb_depth;
}

void futoin__tool_async_cb(uv_async_t* handle)
{
    futoin_tool* tool = handle->data;
    futoin__tool_take_posts(tool);
    futoin__tool_sync(tool);
}

typedef struct remote_imm
{
    futoin__remote node; /* first: the node pointer is the record pointer */
    futoin__cb cb;
    void* data;
} remote_imm;

static void remote_imm_run(futoin__remote* self, bool dropped)
{
    remote_imm* r = (remote_imm*)self;
    futoin__cb cb = r->cb;
    void* data = r->data;
    free(r);
    if (!dropped) {
        cb(data);
    }
}

bool futoin__tool_post_imm(futoin_tool* tool, futoin__cb cb, void* data)
{
    remote_imm* r = malloc(sizeof(*r));
    if (!r) {
        return false;
    }
    r->node.run = remote_imm_run;
    r->cb = cb;
    r->data = data;
    futoin__tool_post_remote(tool, &r->node);
    return true;
}
