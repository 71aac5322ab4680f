/*
 * §1.8 loops. A loop is a frame of kind K_LOOP; each iteration is a K_BODY
 * frame queued under it, so a body may add sub-steps, wait and fail like
 * any step.
 *
 * breakLoop()/continueLoop() "raise a special exception" (§2.2.4): as in
 * both reference implementations, they record the target loop frame and
 * raise LoopBreak / LoopCont, which unwinds like any error. Every error
 * handler on the way sees it (success() there swallows the break, error()
 * replaces it), cancel handlers run, and once the unwinding reaches the
 * target loop (flow.c) the loop ends or goes on with its next iteration.
 */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

void futoin__loop_iterate(futoin__step* l)
{
    futoin__flow* fl = l->flow;
    futoin__step* b;

    if ((l->flags & FUTOIN__F_REPEAT) && l->u.l.i >= l->u.l.count) {
        l->state = FUTOIN__S_DONE;
        return;
    }
    b = futoin__step_new(fl, FUTOIN__K_BODY);
    if (!b) {
        futoin__raise(fl, l, FUTOIN_ERR_INTERNAL_ERROR);
        return;
    }
    futoin__body_init(b, l);
    l->sub_head = b;
    ++l->u.l.i;
}

/* Shared by loop() and repeat(): queue a K_LOOP frame under `s`. */
futoin__step* futoin__loop_add(futoin__step* l, void* data, const char* label)
{
    l->kind = FUTOIN__K_LOOP;
    l->data = data;
    if (label) {
        l->u.l.label = strdup(label);
        if (!l->u.l.label) {
            return NULL;
        }
    }
    return l;
}

static bool label_matches(const futoin__step* l, const char* label)
{
    if (!label) {
        return true; /* no label: the innermost loop */
    }
    return l->u.l.label && strcmp(l->u.l.label, label) == 0;
}

/* breakLoop()/continueLoop() on step `s`, which runs its callback or its
 * error handler now. The target is the innermost loop frame below `s`
 * with a matching label; from a parallel() branch the search goes on in
 * the flow that runs the parallel step, so a break in a branch ends (or
 * continues) the loop around the parallel(). No such loop is InternalError
 * (a deliberate difference: the references leak the internal code). */
void futoin__loop_control(futoin__step* s, const char* label, bool cont)
{
    futoin__flow* fl = s->flow;
    futoin__flow* in = fl;
    futoin__step* l = s->parent;

    if (s->flags & FUTOIN__F_ERROR) {
        return; /* the first error of a callback wins */
    }
    for (;;) {
        while (l && !(l->kind == FUTOIN__K_LOOP && label_matches(l, label))) {
            l = l->parent;
        }
        if (l || !futoin__flow_par(in)) {
            break;
        }
        l = futoin__flow_par(in); /* the parallel() frame: its parents next */
        in = l->flow;
    }
    if (!l) {
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                           label ? (cont ? "continueLoop(): no loop with this label"
                                         : "breakLoop(): no loop with this label")
                                 : (cont ? "continueLoop() outside of a loop"
                                         : "breakLoop() outside of a loop"));
        return;
    }
    futoin__flow_set_ctl(fl, l, cont);
    futoin__step_error(s, cont ? futoin__code_loop_cont : futoin__code_loop_break,
                       NULL);
}
