/**
 * @file futoin/steps.h
 * @brief Adding C steps that say where they were added: FUTOIN_ADD() and
 *        its kin record the function's name and the file:line of the call
 *        for the async stack of an error (futoin/sys/host.h).
 *
 * Each macro is the FTN12 call of the same name, made over any
 * `FutoInAsyncSteps*` (through futoin/sys/wrap.h), plus a class made once
 * per call site in static storage: `#fn`, `__FILE__` and `__LINE__`, so a
 * step costs nothing more to add than with the plain call (no allocation,
 * no string copy; the strings are the program's literals). When a step
 * fails, its frame reads e.g.
 *
 *     at c check_stock (src/orders.c:120)
 *
 * for `FUTOIN_ADD(as, NULL, check_stock, NULL)` on line 120 of
 * src/orders.c, static functions included. Steps added with the plain calls
 * are named from the symbol tables and debug info of the program instead,
 * when it has them (see futoin_async_stack).
 *
 * The macros are statements (`do { ... } while (0)`), except
 * FUTOIN_HOST_ADD(), an expression with futoin_host_add()'s result. Each
 * argument is evaluated once. In C, `release` of the *_OWNED forms must be
 * a constant (a function's name or NULL): it is part of the static class.
 *
 * Over another implementation's handle the step is added with the plain
 * FTN12 call (the origin is not recorded there; `data` is still released
 * once, see futoin/sys/wrap.h).
 *
 * A parallel() step's own frame is never shown; add its branches with
 * FUTOIN_ADD() on the handle parallel() returns. Loop bodies show the
 * frame of their loop's call.
 *
 * Threads: the loop thread, as the calls they stand for.
 * @since 0.3.0
 */
#ifndef FUTOIN_STEPS_H
#define FUTOIN_STEPS_H

#include <futoin/sys/wrap.h>

/** The static class of a C step added at this line: its release hook and
 *  its frame (language "c", `#fn`, __FILE__, __LINE__). For tables of
 *  one's own: `static const futoin_step_class cls =
 *  FUTOIN_STEP_CLASS_HERE(my_step, NULL);`. */
#define FUTOIN_STEP_CLASS_HERE(fn, release)                                    \
    {sizeof(futoin_step_class), (release), NULL, {"c", #fn, __FILE__, __LINE__},    \
     NULL, NULL}

/** add(as, data, fn, eh), recording where. */
#define FUTOIN_ADD(as, data, fn, eh) FUTOIN_ADD_OWNED(as, data, fn, eh, NULL)

/** add() whose `data` the runtime releases with `release` exactly once
 *  (futoin_wrap_add()), recording where. */
#define FUTOIN_ADD_OWNED(as, data, fn, eh, release)                            \
    do {                                                                       \
        static const futoin_step_class futoin__here =                          \
                FUTOIN_STEP_CLASS_HERE(fn, release);                           \
        futoin_wrap_add_classed((as), (data), (fn), (eh), &futoin__here);      \
    } while (0)

/** loop(as, data, fn, label), recording where (every iteration's frame). */
#define FUTOIN_LOOP(as, data, fn, label)                                       \
    FUTOIN_LOOP_OWNED(as, data, fn, label, NULL)

/** loop() whose `data` is released with `release` when the loop ends. */
#define FUTOIN_LOOP_OWNED(as, data, fn, label, release)                        \
    do {                                                                       \
        static const futoin_step_class futoin__here =                          \
                FUTOIN_STEP_CLASS_HERE(fn, release);                           \
        futoin_wrap_loop_classed((as), (data), (fn), (label), &futoin__here);  \
    } while (0)

/** repeat(as, data, count, fn, label), recording where. */
#define FUTOIN_REPEAT(as, data, count, fn, label)                              \
    FUTOIN_REPEAT_OWNED(as, data, count, fn, label, NULL)

/** repeat() whose `data` is released with `release` when the loop ends. */
#define FUTOIN_REPEAT_OWNED(as, data, count, fn, label, release)               \
    do {                                                                       \
        static const futoin_step_class futoin__here =                          \
                FUTOIN_STEP_CLASS_HERE(fn, release);                           \
        futoin_wrap_repeat_classed((as), (data), (count), (fn), (label),       \
                                   &futoin__here);                             \
    } while (0)

/** addSync(as, sync, data, fn, eh), recording where (the guarded step's
 *  frame). */
#define FUTOIN_ADD_SYNC(as, sync, data, fn, eh)                                \
    FUTOIN_ADD_SYNC_OWNED(as, sync, data, fn, eh, NULL)

/** addSync() whose `data` is released with `release` exactly once. */
#define FUTOIN_ADD_SYNC_OWNED(as, sync, data, fn, eh, release)                 \
    do {                                                                       \
        static const futoin_step_class futoin__here =                          \
                FUTOIN_STEP_CLASS_HERE(fn, release);                           \
        futoin_wrap_add_sync_classed((as), (sync), (data), (fn), (eh),         \
                                     &futoin__here);                           \
    } while (0)

/** futoin_host_add(as, language, module, function) whose C steps show
 *  this call's file:line (futoin_host_add_at()); an expression, its value
 *  futoin_host_add()'s. */
#define FUTOIN_HOST_ADD(as, language, module, function)                        \
    futoin_host_add_at((as), (language), (module), (function), __FILE__,      \
                       (uint32_t)__LINE__)

#endif /* FUTOIN_STEPS_H */
