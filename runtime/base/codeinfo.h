/*
 * Names and source lines of C code in this process, read from the ELF
 * symbol tables and the DWARF line tables of the objects it lives in
 * (codeinfo.c). For the async stack's frames of C steps that carry no
 * recorded origin. Not installed.
 */
#ifndef FUTOIN_RUNTIME_BASE_CODEINFO_H
#define FUTOIN_RUNTIME_BASE_CODEINFO_H

#include <stdint.h>

typedef struct futoin__codeinfo
{
    /* The function: its dynamic symbol, else its ELF symbol table entry
     * (static functions of an object that is not stripped); NULL: none. */
    const char* function;
    /* The loaded object's path as the dynamic linker names it, or NULL
     * when `addr` is in no loaded object. */
    const char* object;
    /* The source file and line where the function starts (the first row
     * of the DWARF line table at `addr`), or NULL and 0: no debug info,
     * or the file on disk is not the object loaded (build ids differ).
     * Absolute from a DWARF 5 table; a DWARF 2-4 table does not name the
     * compilation's directory, so the path may be relative to it, as the
     * compiler was given the file. */
    const char* file;
    uint32_t line;
    /* `addr` less the object's load address. */
    uintptr_t offset;
} futoin__codeinfo;

/*
 * What is known of the code at `addr` (a function's entry). The strings
 * live as long as the process. The first call for an address reads the
 * object's file (a few sections, not the whole file); the answer is kept,
 * for up to a few thousand addresses, so later calls only look it up.
 * Thread-safe.
 */
void futoin__codeinfo_get(const void* addr, futoin__codeinfo* out);

#endif
