/**
 * @file futoin/sys/host.h
 * @brief Polyglot flows: steps written in several languages in one flow, on
 *        one loop thread, and one async stack trace across them.
 *
 * Three pieces, all versioned:
 *
 *  - **Step classes** (futoin_step_class): the data of a step added by a
 *    binding says how to release it and where the step came from
 *    (language, function, file:line). Added through the extension table's
 *    add_classed() (futoin/sys/ext.h, version 3).
 *
 *  - **The async stack** (futoin_async_stack): when a step fails, the
 *    runtime records the chain of steps from the failing one down to the
 *    root's level (across parallel() branches into the flow that runs
 *    them), innermost first, each frame with its origin. Read it with the
 *    extension table's async_stack(), or as the FTN12 §1.7 state variable
 *    "async_stack"; futoin_async_stack_format() renders it as text. Every
 *    binding shows it in its language's own form.
 *
 *  - **Language hosts** (futoin_host_api): a plug-in that starts a
 *    language's runtime in this process (or attaches to the one already
 *    running) and turns a named function of that language into a step. A
 *    binding that is already loaded registers its host
 *    (futoin_host_register); otherwise the library loads the plug-in
 *    `libfutoin_host_<language>.so` with dlopen() from where the
 *    language's own settings say its package is installed (below).
 *    Adding a language touches nothing in the library. The language "c"
 *    is built in: plain C functions of shared objects, called through
 *    libffi.
 *
 * **Finding a language's plug-in.** The first of these that holds
 * `libfutoin_host_<language>.so` (a plug-in of that language) is used:
 *
 *  1. a host already registered in the process (the host program's
 *     binding, or a plug-in loaded before);
 *  2. each folder in FUTOIN_HOST_PATH (colon-separated; for development);
 *  3. `futoin-hosts/` next to the libfutoin_async.so.0 that is loaded (the
 *     wheel's or the rock's copy brings its own plug-in there);
 *  4. the language's own settings:
 *     - python: `$VIRTUAL_ENV/lib/python3.N/site-packages`, each PYTHONPATH
 *       entry, `<prefix>/lib/python3.N/site-packages` of each PATH folder
 *       `<prefix>/bin` holding a python3, `/usr/lib/python3/dist-packages`,
 *       `/usr/local/lib/python3.N/dist-packages`; in each,
 *       `futoin_async/futoin-hosts/libfutoin_host_python.so`;
 *     - lua: the templates of LUA_CPATH_5_4, else LUA_CPATH (";;" is Lua
 *       5.4's default cpath), else that default, "?" standing for
 *       `futoin_async/futoin-hosts/libfutoin_host_lua`;
 *     - java: each CLASSPATH entry: a jar holding the stored entry
 *       `native/linux-<cpu>/futoin-hosts/libfutoin_host_java.so` (taken
 *       out into `$XDG_CACHE_HOME/futoin_async/`, else
 *       `~/.cache/futoin_async/`: a folder of the user's own that group
 *       and others cannot write, else refused; the file named by the
 *       entry's CRC-32 and size, written under a temporary name and
 *       renamed, used only while its size and CRC-32 match the jar's),
 *       the jars of a folder (an entry "DIR" "/" "*", as for the java
 *       launcher), or a class folder holding that path;
 *  5. a system install: `<libdir>/futoin_async/futoin-hosts/` of the
 *     installation the loaded library belongs to, of the prefix it was
 *     built for, and under `/usr/local/lib/<multiarch>` and
 *     `/usr/lib/<multiarch>` (where `meson install` puts the plug-ins the
 *     build made).
 *
 * Only an ABSOLUTE path that one of these settings names is ever tried:
 * never the current folder, a relative entry or template ("./?.so"), or an
 * empty element (which PATH, PYTHONPATH and CLASSPATH read as the
 * current folder). Those are left out, and the error says so. A plug-in
 * found but not loadable, or not of its language, is reported and the
 * search goes on. When none is found, the step fails with InvalidRequest
 * naming the language, the step, the package and the command that
 * provide the plug-in, and what was searched.
 *
 * futoin_host_add() puts it together: a step of another language, named by
 * language, module and function, added to a flow. Step names are code,
 * not data: a host program can restrict which languages and modules its
 * flows may load (futoin_host_policy_set(); by default everything is
 * allowed).
 *
 * Threads: everything here belongs to the loop thread of the tool
 * concerned, except futoin_host_register(), futoin_host_find() and
 * futoin_host_policy_set(), which are thread-safe.
 *
 * @since 0.3.0
 */
#ifndef FUTOIN_SYS_HOST_H
#define FUTOIN_SYS_HOST_H

#include <futoin/async.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- where a step came from ------------------------------------------- */

/** One frame of an async stack: where a step was written or added. */
typedef struct futoin_frame_origin
{
    const char* language; /**< "c", "python", "lua", "java", ... */
    const char* function; /**< qualified function name, or NULL */
    const char* file;     /**< source file (or shared object), or NULL */
    uint32_t line;        /**< 1-based line, 0 when unknown */
} futoin_frame_origin;

/**
 * The class of a step's `data`: what the runtime calls when it no longer
 * needs it, and where the step came from. Static storage (the runtime keeps
 * the pointer). Versioned by `size`: fields are only added at the end.
 *
 * A class is either shared by every step of a binding (`origin` tells
 * each step's frame from its data) or made once per place in the source
 * that adds a step, with that place in `frame` (the FUTOIN_ADD() macros
 * of futoin/steps.h do that for C: a static class per call).
 * @since 0.3.0
 */
typedef struct futoin_step_class
{
    /** sizeof(futoin_step_class) the binding was built with */
    uint32_t size;
    /** Exactly once, when the runtime is done with `data` (as
     *  futoin_release_cb of futoin/sys/ext.h); NULL: nothing to release. */
    void (*release)(void* data);
    /** Fill `out` with where the step came from; the strings must stay
     *  valid until `release` runs (the runtime copies them when it records
     *  a stack). `out` comes filled with `frame` when the class has one,
     *  else with language "c" and nothing else. NULL: the frame is `frame`, or when that is empty too,
     *  the step's C function (see futoin_async_stack). */
    void (*origin)(void* data, futoin_frame_origin* out);
    /** Where every step of this class comes from: the frame shown when
     *  `origin` is NULL (the strings are the class's: static storage).
     *  Ignored while `frame.language` is NULL. Read only when `size`
     *  covers it. @since 0.3.0 (extension table version 5) */
    futoin_frame_origin frame;
    /** Where the step came from, for a class whose answer is costly
     *  (a debugger round trip) while errors can be frequent and their
     *  stacks mostly unread. When set, it is asked instead of `origin`
     *  when a stack is recorded: it fills `out` with what is cheap (as
     *  `origin`, copied at once) and returns a token for the rest, or NULL
     *  when `out` is complete. Each token is then given to
     *  `origin_resolve` exactly once. Read only when `size` covers it.
     *  @since 0.3.0 */
    void* (*origin_defer)(void* data, futoin_frame_origin* out);
    /** Finish a frame `origin_defer` left a token for: `out` holds its frame
     *  as recorded and is completed, when the stack is first read (on the
     *  thread that reads it: the flow's loop thread), with strings that
     *  stay valid as long as the stack (they are not copied); `out` NULL
     *  when the stack goes unread: only release the token. Also called
     *  right after `origin_defer` when a step's origin is asked outside a
     *  stack (hooks, dumps). Set whenever `origin_defer` is. */
    void (*origin_resolve)(void* token, futoin_frame_origin* out);
} futoin_step_class;

/* ---- the async stack of an error ---------------------------------------- */

/** Frames kept from the innermost end and from the outermost end of a
 *  deeper stack; the ones in between are counted in `elided`. */
#define FUTOIN_ASYNC_STACK_INNER 48
#define FUTOIN_ASYNC_STACK_OUTER 16

/**
 * The async stack recorded when a step failed: frames[0] is the failing
 * step, the last frame a step at the root's level. Owned by the root;
 * valid until the root's next error, until it runs again, or until it is
 * freed.
 *
 * Every frame names its language and, as far as it is known, the function
 * and the file:line:
 *  - a step whose data has a class (futoin_step_class): what its `origin`
 *    or `frame` says; a binding's step names its own language's function
 *    and source line; a C step added through the macros of futoin/steps.h
 *    names the function as written there and the file:line of that call;
 *    a step of the built-in host "c" names the declaration and the shared
 *    object ("double hypot(double, double)", file "libm.so.6"), or, added
 *    through FUTOIN_HOST_ADD(), the declaration and object as the function
 *    ("double hypot(double, double) in libm.so.6") and the caller's
 *    file:line;
 *  - any other C step (added with the plain FTN12 calls): the function's
 *    name from the dynamic symbols (dladdr()), else from the object's ELF
 *    symbol table (static functions of an object that is not stripped),
 *    else "+0x<offset>" in the object; and the file:line where the
 *    function starts from the object's DWARF line table (the first row
 *    at its entry: GCC gives the line of its opening brace, Clang the
 *    line of its name), when the object was built with debug info and
 *    the file on disk is the one loaded (same build id), else the
 *    object's path as `file` and line 0. Read
 *    from the file the first time a function is shown, then kept for the
 *    process; nothing is read while an error unwinds, only when the
 *    stack is read.
 * @since 0.3.0
 */
typedef struct futoin_async_stack
{
    const char* code;  /**< the error code it was recorded for */
    uint32_t count;    /**< entries in frames[] */
    uint32_t elided;   /**< frames left out between inner and outer part */
    /** after frame `elided_after` come `elided` frames that are left out */
    uint32_t elided_after;
    futoin_frame_origin frames[]; /**< strings owned by the stack */
} futoin_async_stack;

/**
 * Render `stack` as text, one frame a line, innermost first, e.g.
 *   "  at lua pricing.apply (pricing.lua:12)\n". Writes at most `len`
 * bytes including the terminating NUL. Any thread.
 * @return the length the full text needs (as snprintf), or -1 for NULL.
 * @since 0.3.0
 */
FUTOIN_API int futoin_async_stack_format(const futoin_async_stack* stack,
                                         char* buf,
                                         size_t len);

/* ---- state shared between languages ------------------------------------ */

/**
 * Set state variable `name` (§1.7) of the root of `bsi` to `value`, as an
 * FTN12 value every language can read back with futoin_state_get():
 * scalars, strings and arrays of numbers or bools are COPIED (the caller
 * keeps its value); a custom object is MOVED (the caller's copy is reset,
 * and its cleanup runs when the variable is replaced or the root freed).
 * `value` NULL removes the variable; a `value` whose type is NULL is no
 * value and is refused (the variable keeps what it held).
 * Loop thread.
 * @return FUTOIN_OK; FUTOIN_EINVAL for a reserved name ("error_info",
 *         "last_exception", "async_stack"), a NULL name, a value with no
 *         type, a value whose type cannot be copied (an array of strings
 *         or of custom objects) or a handle that is not ours; FUTOIN_EBUSY if `name` holds a variable
 *         made through the stateVariable() slot (it is left alone);
 *         FUTOIN_ENOMEM.
 * @since 0.3.0
 */
FUTOIN_API int futoin_state_set(FutoInAsyncSteps* bsi,
                                const char* name,
                                FutoInBinaryValue* value);

/**
 * The value futoin_state_set() gave `name` (in any language), or NULL.
 * Borrowed: valid until the variable is set again or the root is freed.
 * Loop thread.
 * @since 0.3.0
 */
FUTOIN_API const FutoInBinaryValue* futoin_state_get(FutoInAsyncSteps* bsi,
                                                     const char* name);

/* ---- language hosts ----------------------------------------------------- */

/** A step a host made of a named function. */
typedef struct futoin_host_step
{
    FutoInAsyncSteps_execute_callback execute;
    FutoInAsyncSteps_error_callback error; /**< the step's handler, or NULL */
    void* data;
    const futoin_step_class* cls; /**< release + origin of `data`, or NULL */
} futoin_host_step;

/** Host table version 1 (library 0.3.0). */
#define FUTOIN_HOST_VERSION_1 1u
#define FUTOIN_HOST_VERSION FUTOIN_HOST_VERSION_1

/**
 * What a language host offers. Tables only grow at the end; check
 * `version`/`size` before a newer slot.
 * @since 0.3.0
 */
typedef struct futoin_host_api
{
    uint32_t size;        /**< sizeof(futoin_host_api) of the plug-in */
    uint32_t version;     /**< newest FUTOIN_HOST_VERSION_* present */
    const char* language; /**< the name futoin_host_add() uses: "python" */

    /* ---- version 1 ---- */

    /**
     * Make the language usable on `tool`'s loop thread (the calling
     * thread): start its runtime in this process, or attach to the one
     * already running. Counted: every successful start() is matched by
     * one stop(). On failure write a message naming what is missing (no
     * JVM, no libpython, ...) to `err` and return a negative FUTOIN_E*.
     */
    int (*start)(futoin_tool* tool, char* err, size_t errlen);
    /**
     * Turn `function` of `module` into a step (*out). On failure (no such
     * module, no such function, the module failed to load) write a
     * message naming them to `err` and return a negative FUTOIN_E*. Only
     * between start() and stop().
     */
    int (*resolve)(const char* module,
                   const char* function,
                   futoin_host_step* out,
                   char* err,
                   size_t errlen);
    /** Undo one start(). What the last stop() can release it does (a
     *  JVM, once created, stays for the process). */
    void (*stop)(void);
} futoin_host_api;

/** The entry point a plug-in exports: negotiate as futoin_async_get_api. */
typedef int (*futoin_host_get_fn)(uint32_t version,
                                  const futoin_host_api** out);
#define FUTOIN_HOST_GET_SYMBOL "futoin_host_get"

/**
 * Offer `host` for its language, typically by a binding when it is loaded
 * into a process (the language's runtime is then already running there).
 * `host` is kept (static storage). Thread-safe.
 * @return FUTOIN_OK; FUTOIN_EBUSY if another host of that language is
 *         registered or loaded; FUTOIN_EINVAL / FUTOIN_EVERSION for a bad
 *         table.
 * @since 0.3.0
 */
FUTOIN_API int futoin_host_register(const futoin_host_api* host);

/**
 * The host of `language`: registered, built in ("c") or loaded from its
 * plug-in (see "Finding a language's plug-in" in the file comment).
 * Thread-safe; the table lives as long as the process.
 * @return FUTOIN_OK; FUTOIN_EINVAL (with `err` naming the language, what
 *         provides its plug-in and the places searched) when there is
 *         none.
 * @since 0.3.0
 */
FUTOIN_API int futoin_host_find(const char* language,
                                const futoin_host_api** out,
                                char* err,
                                size_t errlen);

/**
 * Add a step written in `language`: `function` of `module`, started or
 * attached on first use on the tool of `bsi` (a root or a running step of
 * ours). If the host, the module or the function cannot be had, a step is
 * added all the same that fails with InvalidRequest, its error_info naming
 * the language, module and function and why, and the error is returned
 * here as well. Loop thread (of the tool of `bsi`).
 *
 * A host is started once, by the first futoin_host_add() of its language.
 * Loop threads of several tools may add steps of a language at the same
 * moment: one of them calls start(), the others wait until it returns
 * (never two start()s at once) and then use the started host; if that
 * start() failed, the next caller tries again. A start() that itself adds
 * a step of its own language before returning gets FUTOIN_EBUSY for that
 * step (the usual failing step is added).
 *
 * The built-in language "c": `module` is a shared object, named by an
 * absolute path or by a bare soname ("libm.so.6") that dlopen() finds as
 * the dynamic linker does (LD_LIBRARY_PATH, ld.so.cache, the system's
 * folders); a relative path with a slash ("./libx.so") is refused, as
 * dlopen() would take it from the current folder. `function` is either
 *  - a C declaration of a plain function, e.g. "double hypot(double,
 *    double)" (types: void, bool, int32_t, int64_t, uint32_t, uint64_t,
 *    float, double, const char*; int, long, size_t as their 32/64-bit
 *    forms), called with the previous step's values through libffi
 *    (futoin/ffi.h), its return value passed on; or
 *  - a bare name: a step function written against the FTN12 API,
 *    `void name(FutoInAsyncSteps* as, void* data, const FutoInArgs* args)`
 *    (data is NULL), which can do anything a step can.
 *
 * @return FUTOIN_OK, or a negative FUTOIN_E* (the step was added anyway).
 * @since 0.3.0
 */
FUTOIN_API int futoin_host_add(FutoInAsyncSteps* bsi,
                               const char* language,
                               const char* module,
                               const char* function);

/**
 * Stop every host started by futoin_host_add() (one stop() per start()),
 * e.g. before a C host program exits. Loop thread, with no flow running.
 * @since 0.3.0
 */
FUTOIN_API void futoin_host_shutdown(void);

/**
 * futoin_host_add() that also says where in the caller's source the step
 * is added: `file` (static storage, kept: __FILE__) and `line`. A step of
 * the built-in host "c" shows them in its frame of an async stack (see
 * futoin_async_stack); other languages' frames name their own source and
 * ignore them. FUTOIN_HOST_ADD() of futoin/steps.h passes __FILE__ and
 * __LINE__. Same threads, rules and result as futoin_host_add().
 * @since 0.3.0
 */
FUTOIN_API int futoin_host_add_at(FutoInAsyncSteps* bsi,
                                  const char* language,
                                  const char* module,
                                  const char* function,
                                  const char* file,
                                  uint32_t line);

/* ---- what a flow may load: the load policy ------------------------------- */

/**
 * An allow-list of the steps futoin_host_add() may add by name on a tool,
 * in the manner of GraalVM's Context.Builder (its permitted languages and
 * class lookup filter). Adding a step by name is code execution: it starts
 * a language's runtime and loads the module named (a Python module, a Lua
 * module, a Java class, a shared object), so a host program that takes step
 * names from anywhere but its own code restricts them here.
 *
 * - `languages`: the languages a step may be written in, NULL-terminated
 *   ({"python", "c", NULL}); NULL allows every language, an empty list
 *   (just NULL) none.
 * - `modules`: rules "language:name", NULL-terminated; NULL allows every
 *   module of an allowed language. When given, a step's module must match
 *   a rule of its language: the exact name ("lua:pricing",
 *   "c:libm.so.6", "c:/opt/app/lib/libsteps.so"), or a prefix followed by
 *   "*" ("java:org.example.*", "python:myapp.*"; "org.example.*"
 *   matches org.example.Totals and org.example.sub.X, not org.example
 *   itself; "python:*" every Python module; "c:/opt/app/lib/" and a "*"
 *   every library in that folder). A "*" is only allowed last. A prefix
 *   rule never matches a name containing "..", so that a folder's rule
 *   cannot reach outside it.
 *
 * The policy says which names may be added; what the loaded code does in
 * turn (a Python module importing others) is that language's business.
 * Versioned by `size`: fields are only added at the end.
 * @since 0.3.0
 */
typedef struct futoin_host_policy
{
    /** sizeof(futoin_host_policy) the caller was built with */
    uint32_t size;
    /** allowed languages, NULL-terminated; NULL: all */
    const char* const* languages;
    /** allowed modules, "language:name" rules, NULL-terminated; NULL: all */
    const char* const* modules;
} futoin_host_policy;

/** A policy that allows everything, to fill in. */
#define FUTOIN_HOST_POLICY_INIT                                                \
    {                                                                          \
        sizeof(futoin_host_policy), NULL, NULL                                 \
    }

/**
 * Restrict what futoin_host_add() may add on `tool` (its flows, whichever
 * thread or language adds the step), or, with `tool` NULL, in the whole
 * process: a step must pass the process's policy and its tool's (a flow of
 * another implementation, futoin/sys/wrap.h, has no tool of ours: the
 * process's alone). Without one, everything is allowed (the default).
 *
 * A step outside the policy is not added: futoin_host_add() returns
 * FUTOIN_EINVAL and adds a step that fails with InvalidRequest, its
 * error_info naming the rule that refused it ("load policy of this tool:
 * language 'lua' is not allowed (languages: python, c)"). The refused
 * language's plug-in is not even looked for.
 *
 * Set once: the lists are copied, and a second call for the same tool (or
 * for the process) returns FUTOIN_EBUSY and changes nothing, so that code
 * running in a flow cannot widen what its host program allowed. Set it
 * before the tool's flows add steps by name (a binding does it in its Tool
 * constructor); steps added before are not checked again. The policy lives
 * as long as the tool (the process's: as long as the process).
 *
 * Threads: any thread, at any time (a flow adding steps on the loop thread
 * meanwhile sees either no policy or the whole new one).
 * @return FUTOIN_OK; FUTOIN_EBUSY (already set); FUTOIN_EVERSION (`size`
 *         is not one this library knows: a policy with rules it cannot
 *         read is refused rather than half applied); FUTOIN_EINVAL (NULL
 *         policy, a name that is not a language name, a rule without
 *         "language:", an empty name, a "*" that is not last);
 *         FUTOIN_ENOMEM.
 * @since 0.3.0
 */
FUTOIN_API int futoin_host_policy_set(futoin_tool* tool,
                                      const futoin_host_policy* policy);

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_SYS_HOST_H */
