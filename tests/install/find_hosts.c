/* A C program of an installed libfutoin_async (built with pkg-config, as
 * consumer.c) asks for the host of each language named on its command
 * line and prints the file its plug-in was loaded from, one line each:
 * "<language> <file>", or "<language> none: <why>". check.sh runs it with
 * nothing set but PATH: the plug-ins `meson install` put into
 * <libdir>/futoin_async/futoin-hosts/ are found by the library itself
 * (futoin/sys/host.h: the system install the loaded library belongs to).
 * Nothing is started (no Python, Lua or JVM runs): the plug-ins are only
 * loaded. */
#define _GNU_SOURCE
#include <futoin/sys/host.h>

#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv)
{
    int missing = 0;
    for (int i = 1; i < argc; ++i) {
        const futoin_host_api* h = NULL;
        char err[2048];
        Dl_info info;
        if (futoin_host_find(argv[i], &h, err, sizeof(err)) == FUTOIN_OK
            && dladdr((const void*)h, &info) && info.dli_fname) {
            printf("%s %s\n", argv[i], info.dli_fname);
        } else {
            printf("%s none: %s\n", argv[i], err);
            ++missing;
        }
    }
    return missing ? 1 : 0;
}
