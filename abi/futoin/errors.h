/**
 * @file futoin/errors.h
 * @brief FTN12/FTN3 standard error codes, generated from one list.
 *
 * Error codes cross the binary interface as NUL-terminated strings; compare
 * them with strcmp(). FUTOIN_ERROR_MAP is the single source: it produces
 * the C constants here, the binding exception classes and the docs.
 *
 * @since 0.1.0
 */
#ifndef FUTOIN_ERRORS_H
#define FUTOIN_ERRORS_H

#include <futoin/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(ENUM_SUFFIX, "Code", "meaning") */
#define FUTOIN_ERROR_MAP(X)                                                    \
    X(CONNECT_ERROR, "ConnectError", "connection could not be established")    \
    X(COMM_ERROR, "CommError", "communication failed")                         \
    X(UNKNOWN_INTERFACE, "UnknownInterface", "unknown interface")              \
    X(NOT_SUPPORTED_VERSION, "NotSupportedVersion", "version not supported")   \
    X(NOT_IMPLEMENTED, "NotImplemented", "not implemented")                    \
    X(UNAUTHORIZED, "Unauthorized", "not authorized")                          \
    X(INTERNAL_ERROR, "InternalError", "internal error or API misuse")         \
    X(INVALID_REQUEST, "InvalidRequest", "invalid request or argument")        \
    X(DEFENSE_REJECTED, "DefenseRejected", "rejected by a defense limit")      \
    X(PLEASE_RECONNECT, "PleaseReconnect", "retry on another connection")      \
    X(SECURITY_ERROR, "SecurityError", "security violation")                   \
    X(TIMEOUT, "Timeout", "time limit exceeded")

#define FUTOIN__ERR_ENUM(e, s, d) FUTOIN_ERROR_##e,
/** Index of a standard error code. */
typedef enum futoin_error
{
    FUTOIN_ERROR_MAP(FUTOIN__ERR_ENUM) FUTOIN_ERROR_COUNT
} futoin_error;
#undef FUTOIN__ERR_ENUM

/* String constants, e.g. FUTOIN_ERR_TIMEOUT == "Timeout". */
#define FUTOIN_ERR_CONNECT_ERROR "ConnectError"
#define FUTOIN_ERR_COMM_ERROR "CommError"
#define FUTOIN_ERR_UNKNOWN_INTERFACE "UnknownInterface"
#define FUTOIN_ERR_NOT_SUPPORTED_VERSION "NotSupportedVersion"
#define FUTOIN_ERR_NOT_IMPLEMENTED "NotImplemented"
#define FUTOIN_ERR_UNAUTHORIZED "Unauthorized"
#define FUTOIN_ERR_INTERNAL_ERROR "InternalError"
#define FUTOIN_ERR_INVALID_REQUEST "InvalidRequest"
#define FUTOIN_ERR_DEFENSE_REJECTED "DefenseRejected"
#define FUTOIN_ERR_PLEASE_RECONNECT "PleaseReconnect"
#define FUTOIN_ERR_SECURITY_ERROR "SecurityError"
#define FUTOIN_ERR_TIMEOUT "Timeout"

/**
 * The codes breakLoop() and continueLoop() unwind with (FTN12 §2.2.4: they
 * "raise a special exception which gets handled by AsyncSteps
 * internally"). As in the reference implementations, error handlers
 * between the step that breaks and its loop see them: success() there
 * swallows the break, error() replaces it. They are not part of the
 * standard list above (futoin_error_lookup() returns -1 for them).
 * @since 0.2.0
 */
#define FUTOIN_ERR_LOOP_BREAK "LoopBreak"
#define FUTOIN_ERR_LOOP_CONT "LoopCont"

/**
 * The code string of a standard error ("Timeout"), or NULL if out of range.
 * The returned pointer is static and the same for every call, so the
 * runtime can keep it without copying.
 * Threads: any thread.
 */
FUTOIN_API const char* futoin_error_name(futoin_error e);

/** One-line description of a standard error, or NULL if out of range. Threads: any thread. */
FUTOIN_API const char* futoin_error_description(futoin_error e);

/**
 * Look a code string up in the standard list.
 * @return its index, or -1 for a code that is not standard (user codes
 *         such as "myerror" are allowed everywhere and simply return -1).
 * Threads: any thread.
 */
FUTOIN_API int futoin_error_lookup(const char* code);

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_ERRORS_H */
