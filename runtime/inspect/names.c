/*
 * The names of a hook event's numbers (futoin/sys/hooks.h): one table the
 * dump and every binding read, so that a new event or wait kind is named
 * once and the languages cannot drift apart.
 */
#include <futoin/sys/hooks.h>

#include <stddef.h>

#define COUNT(a) (sizeof(a) / sizeof(*(a)))

FUTOIN_API const char* futoin_hook_name(int type)
{
    static const char* const names[] = {
            NULL,         "flow_started",  "flow_finished", "step_entered",
            "step_left",  "error_raised",  "error_handled", "cancel",
            "wait_begun", "wait_ended",    "sync_acquired", "sync_released"};
    return type >= 0 && (size_t)type < COUNT(names) ? names[type] : NULL;
}

FUTOIN_API const char* futoin_hook_outcome_name(int outcome)
{
    static const char* const names[] = {"success", "error", "cancelled"};
    return outcome >= 0 && (size_t)outcome < COUNT(names) ? names[outcome] : NULL;
}

FUTOIN_API const char* futoin_wait_kind_name(int kind)
{
    static const char* const names[] = {"none", "timer", "external", "sync", "foreign"};
    return kind >= 0 && (size_t)kind < COUNT(names) ? names[kind] : NULL;
}
