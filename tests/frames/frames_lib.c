/*
 * A C step function in a shared object, for tests/test_frames.c, which
 * loads it built several ways (tests/meson.build): with DWARF 4 line
 * tables, without debug info, stripped of its symbol table. The step is
 * static, so dladdr() never names it: only the object's file can.
 */
#include <futoin/ftn12.h>

/* the line the line table gives for the step: the one that opens it */
static const unsigned step_line = __LINE__ + 1;
static void lib_static_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a) {
    (void)d;
    (void)a;
    as->api->handle_error(as, "InLib", NULL);
}

/* The step function, and (in *line) the line it starts at. */
__attribute__((visibility("default"))) FutoInAsyncSteps_execute_callback
frames_lib_step(unsigned* line);

__attribute__((visibility("default"))) FutoInAsyncSteps_execute_callback
frames_lib_step(unsigned* line)
{
    *line = step_line;
    return lib_static_step;
}

/* A step function the built-in host "c" resolves by its name (exported),
 * and the line it starts at. */
static const unsigned named_line = __LINE__ + 1;
__attribute__((visibility("default"))) void frames_lib_named_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a) {
    (void)d;
    (void)a;
    as->api->handle_error(as, "ByName", NULL);
}

__attribute__((visibility("default"))) unsigned frames_lib_named_line(void);

__attribute__((visibility("default"))) unsigned frames_lib_named_line(void)
{
    return named_line;
}
