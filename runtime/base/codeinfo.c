/*
 * Names and source lines of C code (codeinfo.h), without a library for
 * it: dladdr() names exported functions only, so the rest is read from
 * the object's file, a few sections with pread() (never mapped: a file
 * truncated meanwhile must not raise SIGBUS in the host program):
 *  - the ELF symbol table (.symtab, else .dynsym) for the function's name;
 *  - the DWARF line table (.debug_line, versions 2 to 5, with
 *    .debug_line_str / .debug_str for v5 names) for the first row at the
 *    function's entry: the line where the function starts (GCC: its
 *    opening brace; Clang: its name).
 * The file must be the object that is loaded: when the loaded object has
 * a GNU build id, the file's must be the same (a program rebuilt while it
 * runs shows no lines rather than wrong ones). Compressed debug sections
 * and separate debug files (/usr/lib/debug) are not read: no line then.
 *
 * Everything read from the file is checked against the section's end; a
 * damaged or unusual table gives no answer, never a crash.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr1, dl_iterate_phdr */
#endif
#include "base/codeinfo.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* No section larger than this is read (a symbol or line table that big
 * is not worth reading on a loop thread). */
#define CI_MAX_SECTION ((size_t)256 << 20)
/* Addresses whose answer is kept. */
#define CI_CACHE_MAX 4096
#define CI_BUCKETS 256

/* ---- the object's file ---------------------------------------------------- */

typedef struct elf_file
{
    int fd;
    size_t size;
    ElfW(Shdr)* sh;
    size_t shnum;
    char* shstr;
    size_t shstr_size;
} elf_file;

typedef struct blob
{
    uint8_t* p;
    size_t n;
} blob;

static bool read_at(int fd, size_t off, void* buf, size_t n)
{
    uint8_t* b = buf;
    while (n) {
        ssize_t got = pread(fd, b, n, (off_t)off);
        if (got <= 0) {
            return false;
        }
        b += got;
        off += (size_t)got;
        n -= (size_t)got;
    }
    return true;
}

/* A malloc'd copy of `n` bytes at `off` (plus a NUL), or NULL. */
static uint8_t* read_range(const elf_file* ef, size_t off, size_t n)
{
    uint8_t* p;
    if (n > CI_MAX_SECTION || off > ef->size || n > ef->size - off) {
        return NULL;
    }
    p = malloc(n + 1);
    if (p && !read_at(ef->fd, off, p, n)) {
        free(p);
        return NULL;
    }
    if (p) {
        p[n] = 0;
    }
    return p;
}

static bool read_section(const elf_file* ef, const ElfW(Shdr)* s, blob* out)
{
    out->p = NULL;
    out->n = 0;
    if (s->sh_type == SHT_NOBITS || (s->sh_flags & SHF_COMPRESSED)) {
        return false;
    }
    out->p = read_range(ef, (size_t)s->sh_offset, (size_t)s->sh_size);
    out->n = out->p ? (size_t)s->sh_size : 0;
    return out->p != NULL;
}

static const ElfW(Shdr)* section_named(const elf_file* ef, const char* name)
{
    for (size_t i = 0; i < ef->shnum; ++i) {
        size_t at = ef->sh[i].sh_name;
        if (at < ef->shstr_size && strcmp(ef->shstr + at, name) == 0) {
            return &ef->sh[i];
        }
    }
    return NULL;
}

static void elf_close(elf_file* ef)
{
    if (ef->fd >= 0) {
        close(ef->fd);
    }
    free(ef->sh);
    free(ef->shstr);
}

static bool elf_open(const char* path, elf_file* ef)
{
    ElfW(Ehdr) eh;
    struct stat st;
    size_t shstrndx;
    memset(ef, 0, sizeof(*ef));
    ef->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (ef->fd < 0 || fstat(ef->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return false;
    }
    ef->size = (size_t)st.st_size;
    if (!read_at(ef->fd, 0, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0
        || eh.e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32)
        || eh.e_ident[EI_DATA]
                   != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
                                                                  : ELFDATA2MSB)
        || eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shoff == 0) {
        return false;
    }
    ef->shnum = eh.e_shnum;
    shstrndx = eh.e_shstrndx;
    if (ef->shnum == 0 || shstrndx == SHN_XINDEX) {
        /* many sections: the real counts are in section 0 */
        ElfW(Shdr) s0;
        if (!read_at(ef->fd, (size_t)eh.e_shoff, &s0, sizeof(s0))) {
            return false;
        }
        if (ef->shnum == 0) {
            ef->shnum = (size_t)s0.sh_size;
        }
        if (shstrndx == SHN_XINDEX) {
            shstrndx = s0.sh_link;
        }
    }
    if (ef->shnum == 0 || ef->shnum > 65536 || shstrndx >= ef->shnum) {
        return false;
    }
    ef->sh = (ElfW(Shdr)*)read_range(ef, (size_t)eh.e_shoff,
                                     ef->shnum * sizeof(ElfW(Shdr)));
    if (!ef->sh) {
        return false;
    }
    {
        blob b;
        if (!read_section(ef, &ef->sh[shstrndx], &b)) {
            return false;
        }
        ef->shstr = (char*)b.p;
        ef->shstr_size = b.n;
    }
    return true;
}

/* ---- build ids ------------------------------------------------------------ */

/* The GNU build id in the notes at p[0..n), with entries aligned to
 * `align` (4 or 8): a pointer into p and its length, or NULL. */
static const uint8_t* note_build_id(const uint8_t* p, size_t n, size_t align,
                                    size_t* len)
{
    size_t at = 0;
    align = align == 8 ? 8 : 4;
    while (n - at >= sizeof(ElfW(Nhdr))) {
        ElfW(Nhdr) nh;
        size_t name, desc;
        memcpy(&nh, p + at, sizeof(nh));
        at += sizeof(nh);
        name = ((size_t)nh.n_namesz + align - 1) & ~(align - 1);
        desc = ((size_t)nh.n_descsz + align - 1) & ~(align - 1);
        if (name > n - at || desc > n - at - name) {
            return NULL;
        }
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4
            && memcmp(p + at, "GNU", 4) == 0) {
            *len = nh.n_descsz;
            return p + at + name;
        }
        at += name + desc;
    }
    return NULL;
}

typedef struct loaded_id
{
    ElfW(Addr) base;
    const char* name;
    const uint8_t* id;
    size_t len;
} loaded_id;

static int find_loaded_id(struct dl_phdr_info* info, size_t size, void* arg)
{
    loaded_id* want = arg;
    const char* name = info->dlpi_name ? info->dlpi_name : "";
    if (info->dlpi_addr != want->base || strcmp(name, want->name) != 0) {
        return 0;
    }
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE) {
            want->id = note_build_id((const uint8_t*)(info->dlpi_addr + ph->p_vaddr),
                                     (size_t)ph->p_memsz, (size_t)ph->p_align,
                                     &want->len);
            if (want->id) {
                break;
            }
        }
    }
    return 1;
}

/* Whether the file is the object loaded at `base` (as far as build ids
 * tell: an object built without one is taken as it is). */
static bool same_build(const elf_file* ef, const struct link_map* lm)
{
    loaded_id mem = {lm->l_addr, lm->l_name ? lm->l_name : "", NULL, 0};
    bool same = false;
    dl_iterate_phdr(find_loaded_id, &mem);
    if (!mem.id) {
        return true;
    }
    for (size_t i = 0; i < ef->shnum && !same; ++i) {
        blob b;
        const uint8_t* id;
        size_t len = 0;
        if (ef->sh[i].sh_type != SHT_NOTE || !read_section(ef, &ef->sh[i], &b)) {
            continue;
        }
        id = note_build_id(b.p, b.n, (size_t)ef->sh[i].sh_addralign, &len);
        same = id && len == mem.len && memcmp(id, mem.id, len) == 0;
        free(b.p);
    }
    return same;
}

/* ---- the symbol table ----------------------------------------------------- */

/* The name of the function that holds `vaddr`, malloc'd, or NULL. */
static char* symbol_of(const elf_file* ef, ElfW(Addr) vaddr)
{
    const ElfW(Shdr)* tab = NULL;
    blob syms, strs;
    char* name = NULL;
    for (size_t i = 0; i < ef->shnum; ++i) {
        if (ef->sh[i].sh_type == SHT_SYMTAB) {
            tab = &ef->sh[i];
            break;
        }
        if (ef->sh[i].sh_type == SHT_DYNSYM) {
            tab = &ef->sh[i];
        }
    }
    if (!tab || tab->sh_link >= ef->shnum || tab->sh_entsize != sizeof(ElfW(Sym))
        || !read_section(ef, tab, &syms)) {
        return NULL;
    }
    if (!read_section(ef, &ef->sh[tab->sh_link], &strs)) {
        free(syms.p);
        return NULL;
    }
    for (size_t i = 0; i + sizeof(ElfW(Sym)) <= syms.n; i += sizeof(ElfW(Sym))) {
        ElfW(Sym) s;
        unsigned type;
        memcpy(&s, syms.p + i, sizeof(s));
        type = ELF64_ST_TYPE(s.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF
            || s.st_name == 0 || s.st_name >= strs.n || vaddr < s.st_value
            || vaddr - s.st_value >= (s.st_size ? s.st_size : 1)) {
            continue;
        }
        /* the function that starts here, else the first that holds it */
        if (!name || s.st_value == vaddr) {
            free(name);
            name = strdup((const char*)strs.p + s.st_name);
            if (s.st_value == vaddr) {
                break;
            }
        }
    }
    free(syms.p);
    free(strs.p);
    return name;
}

/* ---- the DWARF line table --------------------------------------------------- */

/* DWARF 5 constants (<dwarf.h> is not part of the C library). */
enum
{
    LNS_copy = 1,
    LNS_advance_pc = 2,
    LNS_advance_line = 3,
    LNS_set_file = 4,
    LNS_const_add_pc = 8,
    LNS_fixed_advance_pc = 9,
    LNE_end_sequence = 1,
    LNE_set_address = 2,
    LNCT_path = 1,
    LNCT_directory_index = 2,
    FORM_block2 = 0x03,
    FORM_block4 = 0x04,
    FORM_data2 = 0x05,
    FORM_data4 = 0x06,
    FORM_data8 = 0x07,
    FORM_string = 0x08,
    FORM_block = 0x09,
    FORM_block1 = 0x0a,
    FORM_data1 = 0x0b,
    FORM_sdata = 0x0d,
    FORM_strp = 0x0e,
    FORM_udata = 0x0f,
    FORM_data16 = 0x1e,
    FORM_line_strp = 0x1f
};

typedef struct rd
{
    const uint8_t* p;
    const uint8_t* end;
    bool bad;
} rd;

static uint64_t rd_u(rd* r, size_t n)
{
    uint64_t v = 0;
    if ((size_t)(r->end - r->p) < n || n > 8) {
        r->bad = true;
        r->p = r->end;
        return 0;
    }
    for (size_t i = 0; i < n; ++i) {
        v |= (uint64_t)r->p[i] << (8 * i); /* little-endian (elf_open) */
    }
    r->p += n;
    return v;
}

static void rd_skip(rd* r, uint64_t n)
{
    if ((uint64_t)(r->end - r->p) < n) {
        r->bad = true;
        r->p = r->end;
        return;
    }
    r->p += n;
}

/* A LEB128 number: unsigned, or (`sign`) signed, as its bits. */
static uint64_t rd_leb(rd* r, bool sign)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (r->p < r->end) {
        uint8_t b = *r->p++;
        if (shift < 64) {
            v |= (uint64_t)(b & 0x7f) << shift;
        }
        shift += 7;
        if (!(b & 0x80)) {
            if (sign && shift < 64 && (b & 0x40)) {
                v |= ~(uint64_t)0 << shift;
            }
            return v;
        }
    }
    r->bad = true;
    return 0;
}

static uint64_t rd_uleb(rd* r)
{
    return rd_leb(r, false);
}

static int64_t rd_sleb(rd* r)
{
    return (int64_t)rd_leb(r, true);
}

static const char* rd_str(rd* r)
{
    const uint8_t* nul = memchr(r->p, 0, (size_t)(r->end - r->p));
    const char* s = (const char*)r->p;
    if (!nul) {
        r->bad = true;
        r->p = r->end;
        return NULL;
    }
    r->p = nul + 1;
    return s;
}

typedef struct dwarf
{
    blob line, line_str, str;
} dwarf;

/* A line program's header: what running it and naming its files need. */
typedef struct lhdr
{
    unsigned version;
    unsigned offset_size;
    unsigned min_inst;
    int line_base;
    unsigned line_range;
    unsigned opcode_base;
    const uint8_t* std_lens;
    rd tables; /* directories, then files */
    const uint8_t* prog;
    const uint8_t* end;
} lhdr;

static bool lhdr_read(rd* r, lhdr* h)
{
    uint64_t unit, hlen;
    const uint8_t* after;
    memset(h, 0, sizeof(*h));
    h->offset_size = 4;
    unit = rd_u(r, 4);
    if (unit == 0xffffffffu) {
        h->offset_size = 8;
        unit = rd_u(r, 8);
    } else if (unit >= 0xfffffff0u) {
        return false;
    }
    if (r->bad || unit > (uint64_t)(r->end - r->p)) {
        return false;
    }
    h->end = r->p + unit;
    r->end = h->end; /* the rest of this unit */
    h->version = (unsigned)rd_u(r, 2);
    if (h->version < 2 || h->version > 5) {
        return false;
    }
    if (h->version >= 5) {
        rd_u(r, 1); /* address size */
        rd_u(r, 1); /* segment selector size */
    }
    hlen = rd_u(r, h->offset_size);
    if (r->bad || hlen > (uint64_t)(r->end - r->p)) {
        return false;
    }
    after = r->p + hlen;
    h->min_inst = (unsigned)rd_u(r, 1);
    if (h->version >= 4) {
        rd_u(r, 1); /* maximum operations per instruction: VLIW only */
    }
    rd_u(r, 1); /* default is_stmt */
    h->line_base = (int8_t)rd_u(r, 1);
    h->line_range = (unsigned)rd_u(r, 1);
    h->opcode_base = (unsigned)rd_u(r, 1);
    h->std_lens = r->p;
    if (h->opcode_base) {
        rd_skip(r, h->opcode_base - 1u);
    }
    if (r->bad || h->line_range == 0 || h->opcode_base == 0) {
        return false;
    }
    h->tables.p = r->p;
    h->tables.end = after;
    h->tables.bad = false;
    h->prog = after;
    return true;
}

typedef struct row
{
    uint64_t addr;
    uint64_t file;
    uint64_t line;
} row;

/* Run the program of `h` for the first row at the highest address not
 * above `vaddr`, inside a sequence that covers `vaddr`. */
static bool lines_find(const lhdr* h, uint64_t vaddr, row* found)
{
    rd r = {h->prog, h->end, false};
    row cur = {0, 1, 1};
    row grp = {0, 0, 0};
    bool have_grp = false;
    bool dead = false; /* a sequence of discarded code (address 0) */
    while (r.p < r.end && !r.bad) {
        unsigned op = (unsigned)rd_u(&r, 1);
        bool emit = false, end_seq = false;
        if (op >= h->opcode_base) {
            unsigned adj = op - h->opcode_base;
            cur.addr += (uint64_t)(adj / h->line_range) * h->min_inst;
            cur.line += (uint64_t)(int64_t)(h->line_base + (int)(adj % h->line_range));
            emit = true;
        } else if (op == 0) {
            uint64_t len = rd_uleb(&r);
            const uint8_t* next;
            unsigned sub;
            if (r.bad || len == 0 || len > (uint64_t)(r.end - r.p)) {
                return false;
            }
            next = r.p + len;
            sub = (unsigned)rd_u(&r, 1);
            if (sub == LNE_end_sequence) {
                emit = end_seq = true;
            } else if (sub == LNE_set_address && (len == 5 || len == 9)) {
                cur.addr = rd_u(&r, (size_t)(len - 1));
                if (cur.addr == 0 || cur.addr == ~(uint64_t)0 >> (72 - 8 * len)) {
                    dead = true; /* tombstone of code the linker dropped */
                }
            }
            r.p = next; /* define_file, discriminator, vendor ops */
        } else {
            switch (op) {
            case LNS_copy:
                emit = true;
                break;
            case LNS_advance_pc:
                cur.addr += rd_uleb(&r) * h->min_inst;
                break;
            case LNS_advance_line:
                cur.line += (uint64_t)rd_sleb(&r);
                break;
            case LNS_set_file:
                cur.file = rd_uleb(&r);
                break;
            case LNS_const_add_pc:
                cur.addr += (uint64_t)((255 - h->opcode_base) / h->line_range)
                            * h->min_inst;
                break;
            case LNS_fixed_advance_pc:
                cur.addr += rd_u(&r, 2);
                break;
            default:
                /* any other standard opcode: skip its ULEB operands */
                for (unsigned i = 0; i < h->std_lens[op - 1]; ++i) {
                    rd_uleb(&r);
                }
                break;
            }
        }
        if (!emit) {
            continue;
        }
        if (!dead) {
            if (have_grp && cur.addr != grp.addr) {
                if (grp.addr <= vaddr && vaddr < cur.addr) {
                    *found = grp;
                    return true;
                }
                have_grp = false;
            }
            if (!end_seq && !have_grp) {
                grp = cur;
                have_grp = true;
            }
        }
        if (end_seq) {
            row fresh = {0, 1, 1};
            cur = fresh;
            have_grp = false;
            dead = false;
        }
    }
    return false;
}

/* One attribute value of a v5 directory or file entry: a string or a
 * number. False for a form this reader does not know. */
static bool rd_form(rd* r, const lhdr* h, const dwarf* dw, uint64_t form,
                    const char** str, uint64_t* num)
{
    const blob* strs = NULL;
    uint64_t off;
    *str = NULL;
    *num = 0;
    switch (form) {
    case FORM_string:
        *str = rd_str(r);
        return !r->bad;
    case FORM_line_strp:
        strs = &dw->line_str;
        break;
    case FORM_strp:
        strs = &dw->str;
        break;
    case FORM_udata:
        *num = rd_uleb(r);
        return !r->bad;
    case FORM_sdata:
        *num = (uint64_t)rd_sleb(r);
        return !r->bad;
    case FORM_data1:
        *num = rd_u(r, 1);
        return !r->bad;
    case FORM_data2:
        *num = rd_u(r, 2);
        return !r->bad;
    case FORM_data4:
        *num = rd_u(r, 4);
        return !r->bad;
    case FORM_data8:
        *num = rd_u(r, 8);
        return !r->bad;
    case FORM_data16:
        rd_skip(r, 16);
        return !r->bad;
    case FORM_block:
        rd_skip(r, rd_uleb(r));
        return !r->bad;
    case FORM_block1:
        rd_skip(r, rd_u(r, 1));
        return !r->bad;
    case FORM_block2:
        rd_skip(r, rd_u(r, 2));
        return !r->bad;
    case FORM_block4:
        rd_skip(r, rd_u(r, 4));
        return !r->bad;
    default:
        return false;
    }
    off = rd_u(r, h->offset_size);
    if (r->bad || !strs->p || off >= strs->n) {
        return false;
    }
    *str = (const char*)strs->p + off; /* read_range() ends it with a NUL */
    return true;
}

/* Walk a v5 table at r (its format, count and entries) for entry `want`:
 * its path and directory index. 1: found; 0: not there, r is past the
 * table; -1: a form this reader does not know, or a damaged table. */
static int v5_table(rd* r, const lhdr* h, const dwarf* dw, uint64_t want,
                    const char** path, uint64_t* dir)
{
    uint64_t fmt[16][2];
    unsigned nfmt = (unsigned)rd_u(r, 1);
    uint64_t count;
    if (nfmt > 16) {
        return -1;
    }
    for (unsigned i = 0; i < nfmt; ++i) {
        fmt[i][0] = rd_uleb(r);
        fmt[i][1] = rd_uleb(r);
    }
    count = rd_uleb(r);
    if (r->bad) {
        return -1;
    }
    for (uint64_t e = 0; e < count; ++e) {
        for (unsigned i = 0; i < nfmt; ++i) {
            const char* s;
            uint64_t n;
            if (!rd_form(r, h, dw, fmt[i][1], &s, &n)) {
                return -1;
            }
            if (e == want && fmt[i][0] == LNCT_path) {
                *path = s;
            } else if (e == want && fmt[i][0] == LNCT_directory_index) {
                *dir = n;
            }
        }
        if (e == want) {
            return *path ? 1 : -1;
        }
    }
    return 0;
}

/* "dir/name" of file `index` of the program `h`, malloc'd, or NULL. */
static char* file_name(const lhdr* h, const dwarf* dw, uint64_t index)
{
    rd r = h->tables;
    const char* name = NULL;
    const char* dir = NULL;
    const char* comp_dir = NULL;
    uint64_t dir_index = 0;
    if (h->version >= 5) {
        /* directory 0 is the compilation's, the others may be relative
         * to it (meson's "../tests") */
        rd dirs = r;
        uint64_t unused = 0;
        const char* none = NULL;
        if (v5_table(&r, h, dw, ~(uint64_t)0, &none, &unused) != 0
            || v5_table(&r, h, dw, index, &name, &dir_index) != 1) {
            return NULL;
        }
        r = dirs;
        if (v5_table(&r, h, dw, dir_index, &dir, &unused) != 1) {
            dir = NULL;
        }
        r = dirs;
        if (dir_index && dir && dir[0] != '/'
            && v5_table(&r, h, dw, 0, &comp_dir, &unused) != 1) {
            comp_dir = NULL;
        }
    } else {
        /* v2-4: include_directories, then file_names, each ended by an
         * empty string; files count from 1, and directory 0 is the
         * compilation's own (not in the table: the name stays relative) */
        rd dirs = r;
        const char* s;
        while ((s = rd_str(&r)) && *s) {
        }
        for (uint64_t i = 1; (s = rd_str(&r)) && *s; ++i) {
            uint64_t d = rd_uleb(&r);
            rd_uleb(&r); /* modification time */
            rd_uleb(&r); /* length */
            if (r.bad) {
                return NULL;
            }
            if (i == index) {
                name = s;
                dir_index = d;
                break;
            }
        }
        if (!name) {
            return NULL;
        }
        for (uint64_t i = 1; dir_index && (s = rd_str(&dirs)) && *s; ++i) {
            if (i == dir_index) {
                dir = s;
                break;
            }
        }
    }
    if (name[0] == '/' || !dir || !*dir) {
        return strdup(name);
    }
    if (dir[0] == '/' || !comp_dir || !*comp_dir) {
        comp_dir = "";
    }
    {
        size_t n = strlen(comp_dir) + strlen(dir) + strlen(name) + 3;
        char* p = malloc(n);
        if (p) {
            snprintf(p, n, "%s%s%s/%s", comp_dir, *comp_dir ? "/" : "", dir, name);
        }
        return p;
    }
}

/* "a/b/../c/./d" -> "a/c/d", in place: the output never outgrows what
 * was read. A ".." with nothing before it to take away stays. */
static void normalize_path(char* path)
{
    size_t base = path[0] == '/' ? 1 : 0; /* the root stays */
    size_t floor = base;                  /* ".." kept up to here */
    size_t o = base;
    const char* in = path + base;
    while (*in) {
        const char* e = in;
        size_t len;
        while (*e && *e != '/') {
            ++e;
        }
        len = (size_t)(e - in);
        if (len == 0 || (len == 1 && in[0] == '.')) {
            /* "//" and "/./" say nothing */
        } else if (len == 2 && in[0] == '.' && in[1] == '.' && o > floor) {
            size_t k = o; /* take the last component away */
            while (k > floor && path[k - 1] != '/') {
                --k;
            }
            o = k > base ? k - 1 : k;
        } else if (!(len == 2 && in[0] == '.' && in[1] == '.' && base)) {
            if (o > base) {
                path[o++] = '/';
            }
            memmove(path + o, in, len);
            o += len;
            if (len == 2 && in[0] == '.' && in[1] == '.') {
                floor = o;
            }
        }
        in = *e ? e + 1 : e;
    }
    if (o == 0) {
        path[o++] = '.';
    }
    path[o] = 0;
}

/* The source file and line where the code at `vaddr` starts. */
static bool line_of(const elf_file* ef, ElfW(Addr) vaddr, char** file,
                    uint32_t* line)
{
    const ElfW(Shdr)* s = section_named(ef, ".debug_line");
    const ElfW(Shdr)* ls = section_named(ef, ".debug_line_str");
    const ElfW(Shdr)* ss = section_named(ef, ".debug_str");
    dwarf dw;
    rd r;
    bool ok = false;
    memset(&dw, 0, sizeof(dw));
    if (!s || !read_section(ef, s, &dw.line)) {
        return false;
    }
    if (ls) {
        read_section(ef, ls, &dw.line_str);
    }
    if (ss) {
        read_section(ef, ss, &dw.str);
    }
    r.p = dw.line.p;
    r.end = dw.line.p + dw.line.n;
    r.bad = false;
    while (r.p < r.end && !ok) {
        rd unit = r;
        lhdr h;
        row found;
        if (!lhdr_read(&unit, &h)) {
            break;
        }
        if (lines_find(&h, vaddr, &found) && found.line > 0 && found.line <= UINT32_MAX) {
            *file = file_name(&h, &dw, found.file);
            if (*file) {
                normalize_path(*file);
                *line = (uint32_t)found.line;
                ok = true;
            }
            break; /* the unit that has the address: no other will */
        }
        r.p = h.end;
    }
    free(dw.line.p);
    free(dw.line_str.p);
    free(dw.str.p);
    return ok;
}

/* ---- answers, kept -------------------------------------------------------- */

typedef struct ci_entry
{
    struct ci_entry* next;
    const void* addr;
    futoin__codeinfo info; /* strings owned */
} ci_entry;

static pthread_mutex_t ci_mx = PTHREAD_MUTEX_INITIALIZER;
static ci_entry* ci_cache[CI_BUCKETS];
static size_t ci_count;

static ci_entry** ci_bucket(const void* addr)
{
    return &ci_cache[((uintptr_t)addr >> 4) % CI_BUCKETS];
}

static bool ci_lookup(const void* addr, futoin__codeinfo* out)
{
    bool hit = false;
    pthread_mutex_lock(&ci_mx);
    for (ci_entry* e = *ci_bucket(addr); e; e = e->next) {
        if (e->addr == addr) {
            *out = e->info;
            hit = true;
            break;
        }
    }
    pthread_mutex_unlock(&ci_mx);
    return hit;
}

static char* dup_or_null(const char* s)
{
    return s ? strdup(s) : NULL;
}

void futoin__codeinfo_get(const void* addr, futoin__codeinfo* out)
{
    Dl_info dl;
    struct link_map* lm = NULL;
    elf_file ef;
    ci_entry* e;
    char* symbol = NULL;
    char* file = NULL;
    uint32_t line = 0;

    memset(out, 0, sizeof(*out));
    if (ci_lookup(addr, out)) {
        return;
    }
    if (!dladdr1(addr, &dl, (void**)&lm, RTLD_DL_LINKMAP) || !lm) {
        return; /* not in a loaded object (generated code) */
    }
    out->function = dl.dli_sname;
    out->object = dl.dli_fname;
    out->offset = (uintptr_t)addr - (uintptr_t)dl.dli_fbase;

    /* the program itself has no name in the link map: its file is */
    if (elf_open(lm->l_name && lm->l_name[0] ? lm->l_name : "/proc/self/exe", &ef)
        && same_build(&ef, lm)) {
        ElfW(Addr) vaddr = (ElfW(Addr))((uintptr_t)addr - lm->l_addr);
        if (!out->function) {
            symbol = symbol_of(&ef, vaddr);
        }
        line_of(&ef, vaddr, &file, &line);
    }
    elf_close(&ef);

    pthread_mutex_lock(&ci_mx);
    e = ci_count < CI_CACHE_MAX ? calloc(1, sizeof(*e)) : NULL;
    if (e) {
        e->addr = addr;
        e->info.function = symbol ? symbol : dup_or_null(out->function);
        e->info.object = dup_or_null(out->object);
        e->info.file = file;
        e->info.line = file ? line : 0;
        e->info.offset = out->offset;
        symbol = file = NULL;
        e->next = *ci_bucket(addr);
        *ci_bucket(addr) = e;
        ++ci_count;
        *out = e->info;
    }
    pthread_mutex_unlock(&ci_mx);
    /* Not kept (too many addresses, or no memory): the loader's strings
     * only, which live as long as the object. A second thread that
     * answered the same address meanwhile adds a second entry: harmless,
     * the first one is found from then on. */
    free(symbol);
    free(file);
}
