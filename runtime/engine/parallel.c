/*
 * parallel(): a K_PARALLEL frame whose branches each run as a flow of their
 * own, so that they interleave on the loop (each branch is a separate flow
 * for sync objects too, §1.11.4). The parallel frame waits (S_WAIT) until
 * every branch has finished; the first branch error cancels the others and
 * is raised at the parallel frame, whose handler is parallel()'s onerror.
 */
#include "engine/engine.h"

void futoin__parallel_start(futoin__step* p)
{
    futoin__flow* fl = p->flow;
    futoin__root* r = fl->root;
    futoin_tool* tool = futoin__root_tool(r);
    futoin__step* b;

    /* From now on the handle is the running step's: its error handler gets
     * it and may call success()/add() like any step. */
    futoin__set_api(&p->bsi, &futoin__step_api);
    p->state = FUTOIN__S_WAIT;
    if (!p->u.p.br_head) {
        p->state = FUTOIN__S_DONE;
        return;
    }
    while ((b = p->u.p.br_head) != NULL) {
        futoin__flow* bf = futoin__flow_alloc(tool);
        if (!bf) {
            futoin__parallel_cancel(p);
            futoin__raise(fl, p, FUTOIN_ERR_INTERNAL_ERROR);
            return;
        }
        p->u.p.br_head = b->next;
        b->next = NULL;
        b->flow = bf;
        bf->root = r;
        bf->head = b;
        bf->par = p;
        if (p->u.p.flows_tail) {
            p->u.p.flows_tail->next = bf;
        } else {
            p->u.p.flows = bf;
        }
        p->u.p.flows_tail = bf;
        futoin__flow_start(bf);
    }
    p->u.p.br_tail = NULL;
}

static void unlink_flow(futoin__step* p, futoin__flow* bf)
{
    futoin__flow** pp = &p->u.p.flows;
    futoin__flow* prev = NULL;
    while (*pp && *pp != bf) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = bf->next;
        if (p->u.p.flows_tail == bf) {
            p->u.p.flows_tail = prev;
        }
    }
    bf->next = NULL;
}

/* Cancel every running branch of `p`, in the order they were added; each
 * branch unwinds innermost first, running its cancel handlers once. */
void futoin__parallel_cancel(futoin__step* p)
{
    futoin_tool* tool = futoin__step_tool(p);
    futoin__flow* bf;
    while ((bf = p->u.p.flows) != NULL) {
        p->u.p.flows = bf->next;
        bf->next = NULL;
        futoin__flow_cancel(bf);
        bf->par = NULL;
        futoin__flow_release(tool, bf);
    }
    p->u.p.flows_tail = NULL;
}

void futoin__parallel_branch_done(futoin__flow* bf, const char* code)
{
    futoin__step* p = bf->par;
    futoin__flow* fl = p->flow;
    futoin_tool* tool = futoin__flow_tool(fl);

    if (code && futoin__is_loop_code(code)) {
        /* A break in the branch for a loop around the parallel(): it goes
         * on unwinding in this flow, after the siblings are cancelled. */
        futoin__flow_pass_ctl(bf, fl);
    }
    futoin__flow_drop_raise(bf);

    unlink_flow(p, bf);
    bf->par = NULL;
    futoin__flow_release(tool, bf);
    if (code) {
        /* Copies `code` before the siblings' cancel handlers run. */
        futoin__raise(fl, p, code);
        futoin__parallel_cancel(p);
    } else if (!p->u.p.flows) {
        p->state = FUTOIN__S_DONE;
        futoin__flow_schedule(fl);
    }
}
