/* The extension table (futoin/sys/ext.h): release hooks run exactly once,
 * foreign tables are refused by identity, error state as values,
 * successStep, and the negotiated API table. */
#include "common.h"

#include <futoin/sys/ext.h>

#include <pthread.h>
#include <stdlib.h>

TestSuite(ext, .init = fx_setup, .fini = fx_teardown);

static int released[16];
static void rel(void* d)
{
    ++released[(intptr_t)d];
}
static void name_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("step %d released=%d", (int)(intptr_t)d, released[(intptr_t)d]);
}

/* Released after the step ran (not before), once. */
Test(ext, release_after_run)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    memset(released, 0, sizeof(released));
    cr_assert_not_null(x);
    cr_assert_eq(x->version, FUTOIN_EXT_VERSION);
    cr_assert_geq(x->version, FUTOIN_EXT_VERSION_2);
    cr_assert_eq(x->size, sizeof(futoin_async_ext_table));
    x->add(as, (void*)1, name_step, NULL, rel);
    x->add(as, (void*)2, name_step, NULL, rel);
    x->execute(as, (void*)3, on_unhandled, rel);
    run();
    assert_trace("step 1 released=0\nstep 2 released=0\n");
    cr_assert_eq(released[1], 1);
    cr_assert_eq(released[2], 1);
    cr_assert_eq(released[3], 0, "execute data lives with the root");
    API(as)->free(as);
    cr_assert_eq(released[3], 1);
}

/* Steps that never run are released when the root is cancelled or freed. */
static void waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    x->setCancel(as, (void*)5, NULL, rel); /* NULL handler: still released */
    x->setCancel(as, (void*)6, NULL, rel); /* replaces: 5 released now */
    API(as)->waitExternal(as);
    tr("waits, 5 released=%d", released[5]);
}

Test(ext, release_on_cancel_and_free)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    memset(released, 0, sizeof(released));
    x->add(as, (void*)1, waits, NULL, rel);
    x->add(as, (void*)2, name_step, NULL, rel);
    FutoInAsyncSteps* p = x->parallel(as, (void*)7, NULL, rel);
    x->add(p, (void*)8, name_step, NULL, rel);
    x->repeat(as, (void*)9, 3, NULL, "L", rel); /* refused: NULL body */
    cr_assert_eq(released[9], 1, "refused call releases at once");
    API(as)->execute(as, NULL, on_unhandled);
    futoin_tool_run_nowait(T);
    assert_trace("waits, 5 released=1\n");
    API(as)->cancel(as);
    for (int i = 1; i <= 8; ++i) {
        if (i == 3 || i == 4) {
            continue;
        }
        cr_assert_eq(released[i], 1, "data %d released once after cancel", i);
    }
    API(as)->free(as);
    for (int i = 1; i <= 9; ++i) {
        cr_assert_leq(released[i], 1, "data %d released at most once", i);
    }
}

/* Adding after success() is refused: the hook runs at once. */
static void refuses(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    API(as)->success(as, NULL);
    x->add(as, (void*)4, name_step, NULL, rel);
    tr("refused released=%d", released[4]);
}

Test(ext, refused_add_releases_at_once)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    memset(released, 0, sizeof(released));
    API(as)->add(as, NULL, refuses, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("refused released=1\nunhandled InternalError\n");
    API(as)->free(as);
}

/* A table that is not ours is refused by pointer identity; it is exactly
 * 25 slots long, so a read past slot 24 would be caught by ASan/valgrind. */
Test(ext, foreign_table_refused)
{
    void** table = calloc(25, sizeof(void*));
    struct
    {
        const FutoInAsyncStepsAPI* api;
    }* foreign = calloc(1, sizeof(*foreign));
    foreign->api = (const FutoInAsyncStepsAPI*)table;
    cr_assert_null(futoin_async_ext((FutoInAsyncSteps*)foreign));
    cr_assert_null(futoin_async_tool((FutoInAsyncSteps*)foreign));
    cr_assert_null(futoin_async_ext(NULL));
    free(foreign);
    free(table);
}

/* error_info / error_code / last_exception as values. */
static int exc_cleanups;
static void exc_cleanup(FutoInBinaryValue* v)
{
    ++exc_cleanups;
}
static const FutoInType ty_exc = {FTN_TYPE_CUSTOM_OBJECT, exc_cleanup};
static void raises(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInBinaryValue v;
    memset(&v, 0, sizeof(v));
    v.type = &ty_exc;
    v.custom_data = (void*)0x1234;
    futoin_async_ext(as)->set_last_exception(as, &v);
    cr_assert_null(v.type, "moved");
    API(as)->handle_error(as, "LangError", "raised by a binding");
}
static void eh_reads(FutoInAsyncSteps* as, void* d, const char* code)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    tr("%s info=%s code=%s exc=%p", code, x->error_info(as), x->error_code(as),
       x->last_exception(as)->custom_data);
}

Test(ext, error_state_values)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    exc_cleanups = 0;
    API(as)->add(as, NULL, raises, eh_reads);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("LangError info=raised by a binding code=LangError exc=0x1234\n"
                 "unhandled LangError\n");
    cr_assert_eq(exc_cleanups, 0);
    API(as)->free(as);
    cr_assert_eq(exc_cleanups, 1, "exception object cleaned with the root");
}

/* A new error replaces the language exception of the last one: an error
 * raised with none (a Timeout, a C step's error) leaves last_exception
 * NULL, not the exception of an error handled before it. A binding may
 * attach its exception right before handle_error() or right after a
 * completion it made (try_error()): both belong to that error. */
static FutoInAsyncSteps* exc_waiting;
static void exc_handled(FutoInAsyncSteps* as, void* d, const char* code)
{
    const FutoInBinaryValue* x = futoin_async_ext(as)->last_exception(as);
    tr("%s handled, exc=%p cleanups=%d", code, x ? x->custom_data : NULL,
       exc_cleanups);
    API(as)->success(as, NULL);
}
static void times_out(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 1);
}
static void plain_error(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->handle_error(as, "Plain", NULL);
}
/* try_error() from the loop, then the exception: Java's and Lua's order
 * for a completion of a waiting step. */
static void exc_complete_after(void* d)
{
    FutoInBinaryValue v;
    cr_assert_eq(futoin_async_ext(exc_waiting)->try_error(exc_waiting,
                                                          "LateLang", NULL),
                 1);
    memset(&v, 0, sizeof(v));
    v.type = &ty_exc;
    v.custom_data = (void*)0x5678;
    futoin_async_ext(exc_waiting)->set_last_exception(exc_waiting, &v);
}
static void waits_for_lang_error(FutoInAsyncSteps* as, void* d,
                                 const FutoInArgs* a)
{
    exc_waiting = as;
    API(as)->waitExternal(as);
    futoin_tool_immediate(T, exc_complete_after, NULL);
}

Test(ext, a_new_error_clears_the_last_exception)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    exc_cleanups = 0;
    API(as)->add(as, NULL, raises, exc_handled);    /* exception, then error */
    API(as)->add(as, NULL, times_out, exc_handled);  /* Timeout: none */
    API(as)->add(as, NULL, waits_for_lang_error, exc_handled); /* error, then exception */
    API(as)->add(as, NULL, plain_error, exc_handled); /* no exception */
    API(as)->execute(as, NULL, NULL);
    run();
    assert_trace("LangError handled, exc=0x1234 cleanups=0\n"
                 "Timeout handled, exc=(nil) cleanups=1\n"
                 "LateLang handled, exc=0x5678 cleanups=1\n"
                 "Plain handled, exc=(nil) cleanups=2\n");
    cr_assert_null(futoin_async_ext(as)->last_exception(as));
    API(as)->free(as);
    cr_assert_eq(exc_cleanups, 2, "each exception cleaned up once");
}

/* successStep(): values injected after sub-steps (§1.12). */
static void sub(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs v;
    memset(&v, 0, sizeof(v));
    tr("sub");
    API(as)->add(as, NULL, name_step, NULL);
    set_i64(&v, 0, 123);
    futoin_async_ext(as)->successStep(as, &v);
    cr_assert_null(v.arg0.type);
}
static void print_i(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("got %lld", (long long)a->arg0.i64);
}

Test(ext, success_step)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, sub, NULL);
    API(as)->add(as, NULL, print_i, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("sub\nstep 0 released=0\ngot 123\n");
    API(as)->free(as);
}

/* Negotiation: the version the consumer was built for, or a refusal. */
Test(ext, negotiate)
{
    const futoin_async_api* api = (const void*)1;
    cr_assert_eq(futoin_async_get_api(0, &api), FUTOIN_EVERSION);
    cr_assert_null(api);
    cr_assert_eq(futoin_async_get_api(FUTOIN_API_VERSION + 1, &api),
                 FUTOIN_EVERSION);
    cr_assert_eq(futoin_async_get_api(1, NULL), FUTOIN_EINVAL);
    cr_assert_eq(futoin_async_get_api(FUTOIN_API_VERSION_1, &api), FUTOIN_OK);
    cr_assert_eq(api->version, FUTOIN_API_VERSION);
    cr_assert_str_eq(api->version_string(), FUTOIN_VERSION_STRING);
    cr_assert_eq(api->root_new, futoin_root_new);
}

/* ---- chain(): a binding runs its consecutive steps itself --------------- */

/* A "binding" whose trampoline runs the next of its own steps in place for
 * as long as chain() lets it. Each step's data names what it does:
 * "s.." succeeds, "e.." raises Boom, "c.." cancels its root, "a.." adds a
 * sub-step of another kind first, "v.." succeeds with a value. */
static void ch_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
static const FutoInAsyncSteps_execute_callback ch_fns[] = {ch_tr};
static int ch_crossings; /* times the runtime called the trampoline */
static FutoInAsyncSteps* ch_root;

static void plain_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("plain %s%s", (const char*)d,
       a->arg0.type ? " (got a value)" : "");
}
static void ch_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("eh %s: %s", (const char*)d, code);
    SUCCESS0(as);
}
static void ch_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    ++ch_crossings;
    for (;;) {
        const char* name = d;
        void* nd = NULL;
        FutoInAsyncSteps* next;
        tr("%s", name);
        switch (name[0]) {
        case 'e':
            ERROR(as, "Boom");
            cr_assert_null(x->chain(as, ch_fns, 1, &nd), "chained after error");
            return;
        case 'c':
            API(ch_root)->cancel(ch_root);
            break;
        case 'a':
            API(as)->add(as, "sub", plain_step, NULL);
            cr_assert_null(x->chain(as, ch_fns, 1, &nd), "chained after add");
            return;
        case 'v':
            succeed_i64(as, 1, 7, 0);
            cr_assert_null(x->chain(as, ch_fns, 1, &nd), "chained after success");
            return;
        default:
            break;
        }
        next = x->chain(as, ch_fns, 1, &nd);
        if (!next) {
            SUCCESS0(as);
            return;
        }
        cr_assert_neq(next, as);
        as = next;
        d = nd;
    }
}

Test(ext, chain_runs_a_bindings_consecutive_steps_in_one_crossing)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    cr_assert_geq(x->version, FUTOIN_EXT_VERSION_4);
    ch_crossings = 0;
    API(as)->add(as, "s1", ch_tr, ch_eh);
    API(as)->add(as, "s2", ch_tr, ch_eh);
    API(as)->add(as, "s3", ch_tr, ch_eh);
    API(as)->add(as, "p4", plain_step, NULL); /* another kind: no chain */
    API(as)->add(as, "s5", ch_tr, ch_eh);
    API(as)->add(as, "v6", ch_tr, ch_eh);
    API(as)->add(as, "p7", plain_step, NULL); /* gets v6's value */
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("s1\ns2\ns3\nplain p4\ns5\nv6\nplain p7 (got a value)\n");
    cr_assert_eq(ch_crossings, 2, "crossings %d", ch_crossings);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(as)->free(as);
}

/* Sub-steps chain within their level, an error in a chained step reaches
 * that step's own handler, and the level's end is not chained across. */
static void parent_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, "s1", ch_tr, ch_eh);
    API(as)->add(as, "a2", ch_tr, ch_eh);
    API(as)->add(as, "s3", ch_tr, ch_eh);
    API(as)->add(as, "e4", ch_tr, ch_eh);
    API(as)->add(as, "s5", ch_tr, ch_eh);
}
Test(ext, chain_keeps_levels_and_error_handlers)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    ch_crossings = 0;
    API(as)->add(as, NULL, parent_step, NULL);
    API(as)->add(as, "s6", ch_tr, ch_eh);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("s1\na2\nplain sub\ns3\ne4\neh e4: Boom\ns5\ns6\n");
    /* s1+a2 | s3+e4 | s5 (its level ends) | s6 */
    cr_assert_eq(ch_crossings, 4, "crossings %d", ch_crossings);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(as)->free(as);
}

/* A root cancel asked for inside a chained step stops the chain, and the
 * flow ends as cancelled: the steps after it never run. */
Test(ext, chain_stops_at_a_pending_cancel)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    ch_root = as;
    ch_crossings = 0;
    API(as)->add(as, "s1", ch_tr, ch_eh);
    API(as)->add(as, "c2", ch_tr, ch_eh);
    API(as)->add(as, "s3", ch_tr, ch_eh);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("s1\nc2\n");
    cr_assert_eq(ch_crossings, 1);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(as)->free(as);
}

/* chain() pops the step it chains over as the runtime's own completion
 * does: its data is released once, before the next step runs, whether the
 * release hook came with add() or with add_classed()'s class; a step
 * added with no release chains too. */
static void ch_rel(void* d)
{
    tr("rel %s", (const char*)d);
}
static const futoin_step_class ch_cls = {sizeof(futoin_step_class), ch_rel,
                                         NULL, {0}};
Test(ext, chain_releases_each_step_before_the_next_runs)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    ch_crossings = 0;
    x->add(as, "s1", ch_tr, ch_eh, ch_rel);
    x->add_classed(as, "s2", ch_tr, ch_eh, &ch_cls);
    API(as)->add(as, "s3", ch_tr, ch_eh);
    x->add_classed(as, "s4", ch_tr, ch_eh, &ch_cls);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("s1\nrel s1\ns2\nrel s2\ns3\ns4\nrel s4\n");
    cr_assert_eq(ch_crossings, 1, "crossings %d", ch_crossings);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(as)->free(as);
}

/* chain_kept(): the same chaining, but the data of the step chained over
 * is the caller's again: its release hook (add()'s or the class's) never
 * runs for it; a refused chain (another kind next) changes nothing and the
 * step's data is released the usual way. */
static void kp_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
static const FutoInAsyncSteps_execute_callback kp_fns[] = {kp_tr};
static void kp_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    ++ch_crossings;
    for (;;) {
        void* nd = NULL;
        FutoInAsyncSteps* next;
        tr("%s", (const char*)d);
        if (((const char*)d)[0] == 'm') {
            /* stack() memory: chain_kept() takes its general way */
            cr_assert_not_null(API(as)->stack(as, 16, NULL));
        }
        next = x->chain_kept(as, kp_fns, 1, &nd);
        if (!next) {
            SUCCESS0(as);
            return;
        }
        tr("handed back %s", (const char*)d);
        as = next;
        d = nd;
    }
}
Test(ext, chain_kept_hands_the_data_back_instead_of_releasing_it)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    void* nd = NULL;
    cr_assert_geq(x->version, FUTOIN_EXT_VERSION_8);
    cr_assert_geq(x->size, offsetof(futoin_async_ext_table, chain_kept) + sizeof(void*));
    ch_crossings = 0;
    x->add(as, "k1", kp_tr, ch_eh, ch_rel);
    x->add_classed(as, "m2", kp_tr, ch_eh, &ch_cls);
    API(as)->add(as, "k3", kp_tr, ch_eh); /* no release */
    x->add_classed(as, "k4", kp_tr, ch_eh, &ch_cls);
    API(as)->add(as, "p5", plain_step, NULL); /* another kind: no chain */
    API(as)->execute(as, NULL, on_unhandled);
    run();
    /* k1, m2 (with stack() memory) and k3 were chained over: no "rel";
     * k4 ended the usual way */
    assert_trace("k1\nhanded back k1\nm2\nhanded back m2\nk3\nhanded back k3\n"
                 "k4\nrel k4\nplain p5\n");
    cr_assert_eq(ch_crossings, 1, "crossings %d", ch_crossings);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    cr_assert_null(x->chain_kept(NULL, kp_fns, 1, &nd));
    cr_assert_null(x->chain_kept(as, kp_fns, 1, &nd), "a root is no step");
    API(as)->free(as);
}

/* The handle of a step chained over is finished at once: a call through
 * it is misuse and changes nothing; the returned handle is the step's. */
static void st_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
static const FutoInAsyncSteps_execute_callback st_fns[] = {st_tr};
static void st_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    void* nd = NULL;
    FutoInAsyncSteps* next;
    size_t m0;
    tr("%s", (const char*)d);
    next = x->chain(as, st_fns, 1, &nd);
    if (!next) {
        return;
    }
    m0 = misuse_seen;
    succeed_i64(as, 1, 1, 0); /* the step chained over */
    cr_assert_eq(misuse_seen, m0 + 1, "a finished handle was taken");
    cr_assert(strstr(misuse_last, "already completed"), "%s", misuse_last);
    tr("%s", (const char*)nd);
    succeed_i64(next, 1, 2, 0);
}
static void st_last(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("last got %d", a->arg0.type ? (int)a->arg0.i64 : -1);
}
Test(ext, chain_finishes_the_handle_chained_over)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "t1", st_tr, NULL);
    API(as)->add(as, "t2", st_tr, NULL);
    API(as)->add(as, "p3", st_last, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("t1\nt2\nlast got 2\n");
    cr_assert_eq(misuse_seen, 1, "%s", misuse_last);
    API(as)->free(as);
}

/* add_classed() on a root: the class goes with the step queued (released
 * once, after it ran); what add() refuses is reported as add() reports it
 * and the data released at once (no callback, a root that runs, a freed
 * root, another thread); a step's handle takes classed sub-steps too. */
static int cls_released[8];
static void cls_rel(void* d)
{
    ++cls_released[(intptr_t)d];
}
static const futoin_step_class rel_cls = {sizeof(futoin_step_class), cls_rel,
                                          NULL, {0}};
static FutoInAsyncSteps* cls_root;
static void cls_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    size_t m0 = misuse_seen;
    tr("step %d released=%d", (int)(intptr_t)d, cls_released[(intptr_t)d]);
    if (d == (void*)1) {
        x->add_classed(cls_root, (void*)4, cls_step, NULL, &rel_cls);
        tr("while running: released=%d misuse=%d", cls_released[4],
           (int)(misuse_seen - m0));
    } else if (d == (void*)2) {
        x->add_classed(as, (void*)3, cls_step, NULL, &rel_cls);
    }
}
static void cls_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("eh %d: %s", (int)(intptr_t)d, code);
}
static void* cls_other_thread(void* arg)
{
    FutoInAsyncSteps* as = arg;
    futoin_async_ext(as)->add_classed(as, (void*)6, cls_step, NULL, &rel_cls);
    return NULL;
}
Test(ext, add_classed_on_a_root)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* gone = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    pthread_t th;
    memset(cls_released, 0, sizeof(cls_released));
    cls_root = as;
    x->add_classed(as, (void*)5, NULL, NULL, &rel_cls); /* no callback */
    cr_assert_eq(cls_released[5], 1);
    cr_assert_eq(misuse_seen, 1, "%s", misuse_last);
    cr_assert_eq(pthread_create(&th, NULL, cls_other_thread, as), 0);
    pthread_join(th, NULL);
    cr_assert_eq(cls_released[6], 1);
    cr_assert_eq(misuse_seen, 2, "%s", misuse_last);
    API(gone)->free(gone);
    x->add_classed(gone, (void*)7, cls_step, NULL, &rel_cls); /* freed */
    cr_assert_eq(cls_released[7], 1);
    cr_assert_eq(misuse_seen, 3, "%s", misuse_last);
    x->add_classed(as, (void*)1, cls_step, cls_eh, &rel_cls);
    x->add_classed(as, (void*)2, cls_step, NULL, &rel_cls);
    x->add_classed(as, (void*)0, cls_step, NULL, NULL); /* no class */
    API(as)->execute(as, NULL, on_unhandled);
    run();
    /* That add() fails step 1 with InternalError (its handler sees it),
     * as add() throwing out of the step does in the reference; the flow
     * ends there: steps 2 and 0 never run and are released unrun. */
    cr_assert(!strncmp(trace_buf, "step 1 released=0\n"
                       "while running: released=1 misuse=1\n"
                       "eh 1: InternalError\n", 73),
              "trace was:\n%s", trace_buf);
    cr_assert(!strstr(trace_buf, "step 2"), "trace was:\n%s", trace_buf);
    cr_assert_eq(cls_released[1], 1);
    cr_assert_eq(cls_released[2], 1);
    cr_assert_eq(cls_released[4], 1);
    /* executed again: the root takes classed steps once more */
    trace_len = 0;
    trace_buf[0] = 0;
    x->add_classed(as, (void*)2, cls_step, NULL, &rel_cls);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("step 2 released=1\nstep 3 released=0\n");
    cr_assert_eq(cls_released[2], 2);
    cr_assert_eq(cls_released[3], 1);
    API(as)->free(as);
    for (int i = 0; i < 8; ++i) {
        cr_assert_eq(cls_released[i], i == 0 ? 0 : i == 2 ? 2 : 1,
                     "data %d", i);
    }
}

/* Refused quietly for what is not a running step of ours. */
Test(ext, chain_refuses_what_is_not_a_running_step)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    void* nd = NULL;
    cr_assert_null(x->chain(as, ch_fns, 1, &nd), "a root chained");
    cr_assert_null(x->chain(NULL, ch_fns, 1, &nd));
    cr_assert_null(x->chain(as, NULL, 1, &nd));
    cr_assert_null(nd);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(as)->free(as);
}

/* A step that waits takes no sub-steps: add(), add_classed() and
 * successStep() through its handle from outside its callback fail it with
 * InternalError, and their data is released (or their values dropped) at
 * once. The word of a waiting step's sub-step queue holds the time its
 * wait began (runtime/engine/engine.h): the clock is moved on first, so
 * that a walk of that queue would not find it empty. */
static FutoInAsyncSteps* waiters[3];
static void waits_for(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    waiters[(intptr_t)d] = as;
    API(as)->waitExternal(as);
}
Test(ext, a_waiting_step_takes_no_sub_steps, .init = fx_setup_virtual)
{
    FutoInAsyncSteps* roots[3];
    const futoin_async_ext_table* x;
    FutoInArgs v;
    memset(released, 0, sizeof(released));
    memset(cls_released, 0, sizeof(cls_released));
    cr_assert_eq(futoin_tool_advance(T, 400), FUTOIN_OK);
    for (int i = 0; i < 3; ++i) {
        roots[i] = futoin_root_new(T);
        API(roots[i])->add(roots[i], (void*)(intptr_t)i, waits_for, NULL);
        API(roots[i])->execute(roots[i], NULL, on_unhandled);
    }
    run();
    cr_assert_str_eq(trace_buf, "");
    x = futoin_async_ext(waiters[0]);
    x->add(waiters[0], (void*)4, name_step, NULL, rel);
    cr_assert_eq(released[4], 1, "refused: released at once");
    x->add_classed(waiters[1], (void*)5, cls_step, NULL, &rel_cls);
    cr_assert_eq(cls_released[5], 1, "refused: released at once");
    memset(&v, 0, sizeof(v));
    set_i64(&v, 0, 7);
    x->successStep(waiters[2], &v);
    cr_assert_null(v.arg0.type, "moved");
    run();
    assert_trace("unhandled InternalError\nunhandled InternalError\n"
                 "unhandled InternalError\n");
    for (int i = 0; i < 3; ++i) {
        API(roots[i])->free(roots[i]);
    }
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

/* ext add() finds the step it added at the end of the root's queue (to
 * give it the release hook): with roots filled in turn too, where the
 * root's last step is found through the tool's append cursor or by a walk
 * (root.c: a flow keeps no tail). Each hook goes with its own step. */
Test(ext, add_to_roots_in_turn_gives_each_step_its_own_release)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(a);
    memset(released, 0, sizeof(released));
    x->add(a, (void*)1, name_step, NULL, rel);
    x->add(b, (void*)2, name_step, NULL, rel);
    x->add(a, (void*)3, name_step, NULL, rel);
    x->add(a, (void*)4, name_step, NULL, rel);
    x->add(b, (void*)5, name_step, NULL, rel);
    API(b)->execute(b, NULL, on_unhandled);
    run();
    assert_trace("step 2 released=0\nstep 5 released=0\n");
    cr_assert(released[2] == 1 && released[5] == 1);
    cr_assert(released[1] == 0 && released[3] == 0 && released[4] == 0,
              "a's steps have not run");
    API(a)->execute(a, NULL, on_unhandled);
    run();
    assert_trace("step 2 released=0\nstep 5 released=0\n"
                 "step 1 released=0\nstep 3 released=0\nstep 4 released=0\n");
    for (int i = 1; i <= 5; ++i) {
        cr_assert_eq(released[i], 1, "step %d released %d times", i,
                     released[i]);
    }
    API(a)->free(a);
    API(b)->free(b);
}
