/**
 * @file futoin/ftn12.h
 * @brief FTN12 v1.14 §2.7 universal binary interface, byte for byte.
 *
 * This header is the spec's C block made valid C11 and C++: the spec's
 * `auto` in futoin_reset_binval() is spelled out, the needed standard
 * headers are included and an `extern "C"` guard is added. Names, field
 * order and types are the spec's. The layout is frozen by the static
 * assertions at the end of this file; growing a table happens only at its
 * end and only behind a version (see futoin/sys/ext.h).
 *
 * Ownership rules that the spec leaves implicit, as implemented by
 * libfutoin_async:
 *  - `success(bsi, args)` MOVES the values: the runtime takes every value of
 *    `*args` and resets the caller's copy (type = NULL), so the caller must
 *    not clean them up again. `args` may be NULL for "no values".
 *  - The `args` given to an execute callback are valid only during that
 *    call; the runtime cleans them up after the callback returns. Copy what
 *    you need to keep.
 *  - `code` given to an error callback is valid during that call only.
 *  - `handle_error(bsi, code, info)` copies `code` and `info`.
 *  - The `bsi` a step's callback gets is valid until that step ends (it
 *    completed, its timeout or a cancel ended it, its root was freed).
 *    A call through it after that is reported as misuse only while the
 *    step's record is quarantined (the next 1,024 records retired): the
 *    record then serves other steps, and the handle, a bare address, would
 *    reach one of them. To learn when a step ends, anchor a stack()
 *    allocation to it: its cleanup runs when the step's frame ends,
 *    however it ends (README.md, "A step's handle ends with its step").
 *
 * Thread rules, as implemented by libfutoin_async (each slot below says
 * which applies): a tool and its flows live on one thread, the loop
 * thread. success()/handle_error() of a step, and execute()/cancel()/free()
 * of a root, may be called from any thread: they are posted to the loop
 * thread and never block. sched_immediate() and is_same_thread() work from
 * any thread. Every other slot belongs to the loop thread; called from
 * another thread it is refused, reported to the tool's misuse callback and
 * has no effect. Every callback (execute, error, cancel, loop bodies,
 * scheduled callbacks) runs on the loop thread. A posted root call takes
 * effect when it reaches the loop thread (the next futoin_tool_run() or
 * run_nowait() takes posts made while no run was on the stack). If the
 * loop thread freed that root in the meantime, the free wins: the call
 * is dropped quietly (an execute()'s release hook still runs), except a
 * second free(), which is reported as a double free. It never reaches a
 * root that reuses the freed one's memory.
 *
 * @since 0.1.0
 */
#ifndef FUTOIN_FTN12_H
#define FUTOIN_FTN12_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
#include <cstdint>
/* C++11 has char16_t/char32_t as keywords; <uchar.h> is C-only on some libcs */
#else
#include <uchar.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- §2.7.1 Binary data ------------------------------------------------ */

typedef struct FutoInBinaryValue_ FutoInBinaryValue;
typedef struct FutoInType_ FutoInType;
typedef uint8_t FutoInTypeFlags;

enum
{
    FTN_TYPE_CUSTOM_OBJECT = 0x01,
    FTN_TYPE_STRING = 0x02,
    FTN_TYPE_STRING16 = 0x03,
    FTN_TYPE_STRING32 = 0x04,
    FTN_TYPE_BOOL = 0x05,
    FTN_TYPE_INT8 = 0x06,
    FTN_TYPE_INT16 = 0x07,
    FTN_TYPE_INT32 = 0x08,
    FTN_TYPE_INT64 = 0x09,
    FTN_TYPE_UINT8 = 0x0A,
    FTN_TYPE_UINT16 = 0x0B,
    FTN_TYPE_UINT32 = 0x0C,
    FTN_TYPE_UINT64 = 0x0D,
    FTN_TYPE_FLOAT = 0x0E,
    FTN_TYPE_DOUBLE = 0x0F,
    FTN_BASE_TYPE_MASK = 0x0F,
    /* -- */
    FTN_TYPE_ARRAY = 0x10,
    FTN_COMPLEX_TYPE_MASK = 0xF0
};

struct FutoInType_
{
    const FutoInTypeFlags flags;
    void (*const cleanup)(FutoInBinaryValue* v);
    /* NOTE: extendable by implementation */
};

struct FutoInBinaryValue_
{
    const FutoInType* type;
    union
    {
        const void* p;
        const char* cstr;
        const char16_t* cstr16;
        const char32_t* cstr32;
        bool b;
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        float f;
        double d;
    };
    void* custom_data;
    uint32_t length;
};

/** Run the value's type cleanup (if any) and zero the holder. */
static inline void futoin_reset_binval(FutoInBinaryValue* v)
{
    const FutoInType* tp = v->type;
    if (tp) {
        void (*f)(FutoInBinaryValue*) = tp->cleanup;
        if (f) {
            f(v);
        }
    }

    v->type = 0;
    v->u64 = 0;
    v->custom_data = 0;
    v->length = 0;
}

/* ---- §2.7.2 Binary AsyncSteps interface -------------------------------- */

typedef struct FutoInAsyncStepsAPI_ FutoInAsyncStepsAPI;
typedef struct FutoInAsyncSteps_ FutoInAsyncSteps;
typedef struct FutoInSyncAPI_ FutoInSyncAPI;
typedef struct FutoInSync_ FutoInSync;
typedef struct FutoInArgs_ FutoInArgs;
typedef struct FutoInHandle_ FutoInHandle;

struct FutoInArgs_
{
    union
    {
        struct
        {
            FutoInBinaryValue arg0;
            FutoInBinaryValue arg1;
            FutoInBinaryValue arg2;
            FutoInBinaryValue arg3;
        };
        FutoInBinaryValue args[4];
    };
};

struct FutoInHandle_
{
    void* data1;
    void* data2;
    ptrdiff_t data3;
};

typedef void (*FutoInAsyncSteps_execute_callback)(
        FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args);
typedef void (*FutoInAsyncSteps_error_callback)(
        FutoInAsyncSteps* bsi, void* data, const char* code);
typedef void (*FutoInAsyncSteps_cancel_callback)(
        FutoInAsyncSteps* bsi, void* data);

struct FutoInAsyncStepsAPI_
{
    union
    {
        struct
        {
            /* Index 0. Threads (libfutoin_async): loop thread */
            void (*add)(
                    FutoInAsyncSteps* bsi,
                    void* data,
                    FutoInAsyncSteps_execute_callback f,
                    FutoInAsyncSteps_error_callback eh);
            /* Index 1. Threads (libfutoin_async): loop thread */
            FutoInAsyncSteps* (*parallel)(
                    FutoInAsyncSteps* bsi,
                    void* data,
                    FutoInAsyncSteps_error_callback eh);
            /* Index 2. Threads (libfutoin_async): loop thread */
            void* (*stateVariable)(
                    FutoInAsyncSteps* bsi,
                    void* data,
                    const char* name,
                    void* (*allocate)(void* data),
                    void (*cleanup)(void* data, void* value));
            /* Index 3. Threads (libfutoin_async): loop thread */
            void* (*stack)(
                    FutoInAsyncSteps* bsi,
                    size_t data_size,
                    void (*cleanup)(void* value));
            /* Index 4. Threads (libfutoin_async): any thread (posted to the loop thread) */
            void (*success)(FutoInAsyncSteps* bsi, FutoInArgs* args);
            /* Index 5. Threads (libfutoin_async): any thread (posted to the loop thread) */
            void (*handle_error)(
                    FutoInAsyncSteps* bsi, const char* code, const char* info);
            /* Index 6. Threads (libfutoin_async): loop thread */
            void (*setTimeout)(FutoInAsyncSteps* bsi, uint32_t timeout_ms);
            /* Index 7. Threads (libfutoin_async): loop thread */
            void (*setCancel)(
                    FutoInAsyncSteps* bsi,
                    void* data,
                    FutoInAsyncSteps_cancel_callback ch);
            /* Index 8. Threads (libfutoin_async): loop thread */
            void (*waitExternal)(FutoInAsyncSteps* bsi);
            /* Index 9. Threads (libfutoin_async): loop thread */
            void (*loop)(
                    FutoInAsyncSteps* bsi,
                    void* data,
                    void (*f)(FutoInAsyncSteps* bsi, void* data),
                    const char* label);
            /* Index 10. Threads (libfutoin_async): loop thread */
            void (*repeat)(
                    FutoInAsyncSteps* bsi,
                    void* data,
                    size_t count,
                    void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
                    const char* label);
            /* Index 11. Threads (libfutoin_async): loop thread */
            void (*breakLoop)(FutoInAsyncSteps* bsi, const char* label);
            /* Index 12. Threads (libfutoin_async): loop thread */
            void (*continueLoop)(FutoInAsyncSteps* bsi, const char* label);
            /* Index 13. Threads (libfutoin_async): any thread (posted to the loop thread).
             * A root that ended can be executed again: its last step ran,
             * or an error no handler took / a cancel ended it, which drops
             * the steps it did not run; only steps added since then run. */
            void (*execute)(
                    FutoInAsyncSteps* bsi,
                    void* data,
                    FutoInAsyncSteps_error_callback unhandled_error);
            /* Index 14. Threads (libfutoin_async): any thread (posted to the loop thread) */
            void (*cancel)(FutoInAsyncSteps* bsi);
            /* Index 15. Threads (libfutoin_async): loop thread */
            void (*addSync)(
                    FutoInAsyncSteps* bsi,
                    FutoInSync* sync,
                    void* data,
                    FutoInAsyncSteps_execute_callback f,
                    FutoInAsyncSteps_error_callback eh);
            /* Index 16. Threads (libfutoin_async): loop thread */
            ptrdiff_t (*rootId)(FutoInAsyncSteps* bsi);
            /* Index 17. Threads (libfutoin_async): loop thread */
            int (*isValid)(FutoInAsyncSteps* bsi);
            /* Index 18. Threads (libfutoin_async): loop thread */
            FutoInAsyncSteps* (*newInstance)(FutoInAsyncSteps* bsi);
            /* Index 19. Threads (libfutoin_async): any thread (posted to the loop thread) */
            void (*free)(FutoInAsyncSteps* bsi);
            /* Index 20. Threads (libfutoin_async): any thread */
            FutoInHandle (*sched_immediate)(
                    FutoInAsyncSteps* bsi, void* data, void (*cb)(void* data));
            /* Index 21. Threads (libfutoin_async): loop thread */
            FutoInHandle (*sched_deferred)(
                    FutoInAsyncSteps* bsi,
                    uint32_t delay_ms,
                    void* data,
                    void (*cb)(void* data));
            /* Index 22. Threads (libfutoin_async): loop thread */
            void (*sched_cancel)(FutoInAsyncSteps* bsi, FutoInHandle* handle);
            /* Index 23. Threads (libfutoin_async): loop thread */
            int (*sched_is_valid)(FutoInAsyncSteps* bsi, FutoInHandle* handle);
            /* Index 24. Threads (libfutoin_async): any thread */
            int (*is_same_thread)(FutoInAsyncSteps* bsi);
        };
        void* funcs[25];
    };
    /* NOTE: extendable by implementation */
};

struct FutoInAsyncSteps_
{
#ifdef __cplusplus
    FutoInAsyncSteps_(const FutoInAsyncStepsAPI* api) noexcept : api(api) {}
#endif
    const FutoInAsyncStepsAPI* const api;
    /* NOTE: extendable by implementation */
};

/* ---- §2.7.3 Binary synchronization primitive's interface ---------------- */

struct FutoInSyncAPI_
{
    union
    {
        struct
        {
            /* Index 0. Called by the engine on the loop thread. */
            void (*lock)(FutoInAsyncSteps* bsi, FutoInSync* sync);
            /* Index 1. Called by the engine on the loop thread. */
            void (*unlock)(FutoInAsyncSteps* bsi, FutoInSync* sync);
        };
        void* funcs[2];
    };
    /* NOTE: extendable by implementation */
};

struct FutoInSync_
{
#ifdef __cplusplus
    FutoInSync_() noexcept : api(nullptr) {}
#endif
    const FutoInSyncAPI* const api;
    /* NOTE: extendable by implementation */
};

/* ---- Frozen layout ------------------------------------------------------ */

#ifdef __cplusplus
#define FUTOIN__SASSERT(c, m) static_assert(c, m)
#else
#define FUTOIN__SASSERT(c, m) _Static_assert(c, m)
#endif
#define FUTOIN__SLOT(n, f)                                                     \
    FUTOIN__SASSERT(offsetof(FutoInAsyncStepsAPI, f) == (n) * sizeof(void*),   \
                    "FTN12 slot " #n " (" #f ") moved")

FUTOIN__SLOT(0, add);
FUTOIN__SLOT(1, parallel);
FUTOIN__SLOT(2, stateVariable);
FUTOIN__SLOT(3, stack);
FUTOIN__SLOT(4, success);
FUTOIN__SLOT(5, handle_error);
FUTOIN__SLOT(6, setTimeout);
FUTOIN__SLOT(7, setCancel);
FUTOIN__SLOT(8, waitExternal);
FUTOIN__SLOT(9, loop);
FUTOIN__SLOT(10, repeat);
FUTOIN__SLOT(11, breakLoop);
FUTOIN__SLOT(12, continueLoop);
FUTOIN__SLOT(13, execute);
FUTOIN__SLOT(14, cancel);
FUTOIN__SLOT(15, addSync);
FUTOIN__SLOT(16, rootId);
FUTOIN__SLOT(17, isValid);
FUTOIN__SLOT(18, newInstance);
FUTOIN__SLOT(19, free);
FUTOIN__SLOT(20, sched_immediate);
FUTOIN__SLOT(21, sched_deferred);
FUTOIN__SLOT(22, sched_cancel);
FUTOIN__SLOT(23, sched_is_valid);
FUTOIN__SLOT(24, is_same_thread);
FUTOIN__SASSERT(sizeof(FutoInAsyncStepsAPI) == 25 * sizeof(void*),
                "FTN12 vtable must be exactly 25 slots");
FUTOIN__SASSERT(offsetof(FutoInSyncAPI, lock) == 0, "sync slot 0 moved");
FUTOIN__SASSERT(offsetof(FutoInSyncAPI, unlock) == sizeof(void*),
                "sync slot 1 moved");
FUTOIN__SASSERT(sizeof(FutoInSyncAPI) == 2 * sizeof(void*),
                "FTN12 sync table must be exactly 2 slots");
FUTOIN__SASSERT(offsetof(FutoInAsyncSteps, api) == 0, "api must come first");
FUTOIN__SASSERT(offsetof(FutoInSync, api) == 0, "api must come first");
FUTOIN__SASSERT(offsetof(FutoInBinaryValue, type) == 0, "binval.type moved");
FUTOIN__SASSERT(offsetof(FutoInBinaryValue, u64) == sizeof(void*),
                "binval payload moved");
FUTOIN__SASSERT(offsetof(FutoInBinaryValue, custom_data) == 2 * sizeof(void*),
                "binval.custom_data moved");
FUTOIN__SASSERT(offsetof(FutoInBinaryValue, length) == 3 * sizeof(void*),
                "binval.length moved");
FUTOIN__SASSERT(sizeof(FutoInBinaryValue) == 4 * sizeof(void*),
                "FutoInBinaryValue size changed");
FUTOIN__SASSERT(sizeof(FutoInArgs) == 4 * sizeof(FutoInBinaryValue),
                "FutoInArgs size changed");
FUTOIN__SASSERT(sizeof(FutoInHandle) == 3 * sizeof(void*),
                "FutoInHandle size changed");
FUTOIN__SASSERT(sizeof(FutoInType) == 2 * sizeof(void*),
                "FutoInType size changed");
#if UINTPTR_MAX == UINT64_MAX
FUTOIN__SASSERT(sizeof(FutoInBinaryValue) == 32, "x86-64: 32-byte binval");
FUTOIN__SASSERT(sizeof(FutoInArgs) == 128, "x86-64: 128-byte args");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FUTOIN_FTN12_H */
