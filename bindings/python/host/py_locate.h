/*
 * Where the plug-in libfutoin_host_python.so finds the CPython it was
 * built for, when the program that loads it runs none (host/py_locate.c):
 * its libpython and the interpreter whose site-packages hold the plug-in's
 * own package, from the plug-in's location and the ecosystem's settings
 * only (an installed wheel in a venv or a Python installation,
 * VIRTUAL_ENV, PATH), never a variable of ours (FUTOIN_LIBPYTHON, kept for
 * development, comes first when set).
 */
#ifndef FUTOIN_PY_LOCATE_H
#define FUTOIN_PY_LOCATE_H

#include <limits.h>
#include <stddef.h>

typedef struct fpy_located
{
    /* dlopen() this: an absolute path, or a bare soname (the system's
     * search path) */
    char libpython[PATH_MAX];
    /* the interpreter to start as (PyConfig.program_name): the venv's
     * python, so that site.py sees its pyvenv.cfg and adds its
     * site-packages, or the installation's; "" when unknown */
    char program[PATH_MAX];
    /* the folder holding the package futoin_async the plug-in ships in,
     * or "" */
    char package_parent[PATH_MAX];
    /* what was looked at, for the error message */
    char searched[1024];
} fpy_located;

/** Fill `out` for CPython `major`.`minor`, whose libpython's soname is
 * `soname`; `self` is an address inside the plug-in (dladdr). */
void fpy_locate(fpy_located* out, int major, int minor, const char* soname,
                const void* self);

#endif
