/*
 * §1.8 loops. A loop is a frame of kind K_LOOP; each iteration is a K_BODY
 * frame queued under it, so a body may add sub-steps, wait and fail like
 * any step. breakLoop()/continueLoop() only record the target loop frame;
 * flow.c unwinds to it once the calling callback has returned.
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
 * with a matching label, within this flow (a parallel branch cannot leave
 * a loop of its parent: that is an error, as is an unknown label). */
void futoin__loop_control(futoin__step* s, const char* label, bool cont)
{
    futoin__flow* fl = s->flow;
    futoin__step* l;

    if (s->flags & (FUTOIN__F_ERROR | FUTOIN__F_LOOPCTL)) {
        return;
    }
    for (l = s->parent; l; l = l->parent) {
        if (l->kind == FUTOIN__K_LOOP && label_matches(l, label)) {
            break;
        }
    }
    if (!l) {
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                           label ? (cont ? "continueLoop(): no loop with this label"
                                         : "breakLoop(): no loop with this label")
                                 : (cont ? "continueLoop() outside of a loop"
                                         : "breakLoop() outside of a loop"));
        return;
    }
    s->flags |= FUTOIN__F_LOOPCTL;
    fl->ctl_target = l;
    fl->ctl_continue = cont ? 1 : 0;
}
