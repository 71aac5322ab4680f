/*
 * One STORED entry of a zip, found through the central directory
 * (zip_entry.h says what and why). Every number read from the file is
 * untrusted: each one is checked against the bytes that really exist
 * before it is used as an offset or a length, with 64-bit arithmetic that
 * cannot wrap (all values are below 2^63 when compared).
 */
#define _POSIX_C_SOURCE 200809L
#include "zip_entry.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u

#define END_LEN 22u       /* end of central directory record */
#define LOCATOR64_LEN 20u /* ZIP64 end of central directory locator */
#define END64_LEN 56u     /* ZIP64 end record, fixed part */
#define CENTRAL_LEN 46u   /* central directory header, fixed part */
#define LOCAL_LEN 30u     /* local file header, fixed part */
#define MAX_COMMENT 0xFFFFu

static void say(char* err, size_t errlen, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char* err, size_t errlen, const char* fmt, ...)
{
    va_list ap;
    if (!err || !errlen) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static uint16_t le16(const unsigned char* p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t le32(const unsigned char* p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16)
           | ((uint32_t)p[3] << 24);
}

static uint64_t le64(const unsigned char* p)
{
    return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

/* ---- CRC-32 (reflected 0xEDB88320), a byte at a time from a constant
 * table (the one every zip implementation has): nothing to initialise,
 * nothing shared to race on. */

static const uint32_t crc_table[256] = {
        0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
        0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
        0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
        0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
        0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
        0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
        0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
        0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
        0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
        0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
        0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
        0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
        0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
        0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
        0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
        0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
        0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
        0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
        0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
        0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
        0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
        0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
        0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
        0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
        0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
        0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
        0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
        0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
        0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
        0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
        0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
        0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
        0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
        0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
        0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
        0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
        0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
        0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
        0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
        0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
        0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
        0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
        0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

uint32_t futoin__zip_crc32(uint32_t crc, const void* data, size_t len)
{
    const unsigned char* p = data;
    crc = ~crc;
    while (len--) {
        crc = (crc >> 8) ^ crc_table[(crc ^ *p++) & 0xFFu];
    }
    return ~crc;
}

/* ---- finding the entry ------------------------------------------------- */

/* Where the central directory is, after reading the end records. */
typedef struct directory
{
    uint64_t offset; /* in the file (prefix bytes included) */
    uint64_t size;
    uint64_t base; /* bytes before the archive proper (e.g. a script) */
} directory;

/* The end of central directory record: searched backwards from the end
 * over at most 64 KiB of comment; a candidate counts only if its comment
 * runs exactly to the end of the file (a signature inside a comment does
 * not). Then the ZIP64 records when the classic fields are saturated. */
static int find_directory(futoin_zip_read_fn read, void* ctx, uint64_t size,
                          directory* d, char* err, size_t errlen)
{
    unsigned char* tail;
    size_t tail_len;
    uint64_t tail_at, end_at = 0, cd_end;
    uint64_t entries, cd_size, cd_offset;
    int found = 0;
    if (size < END_LEN) {
        say(err, errlen, "not a zip: %llu bytes, too short for its end record",
            (unsigned long long)size);
        return FUTOIN_ZIP_MALFORMED;
    }
    tail_len = size < END_LEN + MAX_COMMENT ? (size_t)size : END_LEN + MAX_COMMENT;
    tail_at = size - tail_len;
    tail = malloc(tail_len);
    if (!tail) {
        say(err, errlen, "out of memory");
        return FUTOIN_ZIP_NOMEM;
    }
    if (read(ctx, tail_at, tail, tail_len) != 0) {
        free(tail);
        say(err, errlen, "cannot read the end of the file");
        return FUTOIN_ZIP_IO;
    }
    for (size_t p = tail_len - END_LEN + 1; p-- > 0;) {
        if (tail[p] == 'P' && le32(tail + p) == SIG_END
            && (size_t)le16(tail + p + 20) == tail_len - p - END_LEN) {
            end_at = tail_at + p;
            found = 1;
            break;
        }
    }
    if (!found) {
        free(tail);
        say(err, errlen, "not a zip: no end of central directory record");
        return FUTOIN_ZIP_MALFORMED;
    }
    {
        const unsigned char* e = tail + (end_at - tail_at);
        uint16_t disk = le16(e + 4), cd_disk = le16(e + 6);
        uint16_t here = le16(e + 8), total = le16(e + 10);
        entries = total;
        cd_size = le32(e + 12);
        cd_offset = le32(e + 16);
        if (disk != 0xFFFF && cd_disk != 0xFFFF && (disk != 0 || cd_disk != 0 || here != total)) {
            free(tail);
            say(err, errlen, "a multi-disk archive (disk %u of %u)", disk, cd_disk);
            return FUTOIN_ZIP_UNSUPPORTED;
        }
    }
    free(tail);
    cd_end = end_at;
    if (entries == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {
        /* ZIP64: the locator right before the end record says where the
         * ZIP64 end record is; that one has the real numbers */
        unsigned char loc[LOCATOR64_LEN], rec[END64_LEN];
        uint64_t rec_at;
        if (end_at < LOCATOR64_LEN
            || read(ctx, end_at - LOCATOR64_LEN, loc, sizeof(loc)) != 0
            || le32(loc) != SIG_LOCATOR64) {
            if (entries == 0xFFFF && cd_size != 0xFFFFFFFFu && cd_offset != 0xFFFFFFFFu) {
                goto classic; /* 65535 entries exactly, no ZIP64 */
            }
            say(err, errlen, "ZIP64 end locator missing");
            return FUTOIN_ZIP_MALFORMED;
        }
        if (le32(loc + 4) != 0 || le32(loc + 16) > 1) {
            say(err, errlen, "a multi-disk ZIP64 archive");
            return FUTOIN_ZIP_UNSUPPORTED;
        }
        rec_at = le64(loc + 8);
        if (rec_at > end_at - LOCATOR64_LEN || end_at - LOCATOR64_LEN - rec_at < END64_LEN
            || read(ctx, rec_at, rec, sizeof(rec)) != 0 || le32(rec) != SIG_END64) {
            say(err, errlen, "ZIP64 end record missing or out of bounds");
            return FUTOIN_ZIP_MALFORMED;
        }
        if (le32(rec + 16) != 0 || le32(rec + 20) != 0 || le64(rec + 24) != le64(rec + 32)) {
            say(err, errlen, "a multi-disk ZIP64 archive");
            return FUTOIN_ZIP_UNSUPPORTED;
        }
        entries = le64(rec + 32);
        cd_size = le64(rec + 40);
        cd_offset = le64(rec + 48);
        cd_end = rec_at;
    }
classic:
    (void)entries; /* the directory's size bounds the walk, not the count */
    /* the directory ends where the end record(s) begin; anything before the
     * offset it claims is a prefix (a script before an executable jar) */
    if (cd_size > cd_end || cd_offset > cd_end - cd_size) {
        say(err, errlen, "central directory out of bounds (offset %llu, size %llu, "
            "end record at %llu)", (unsigned long long)cd_offset,
            (unsigned long long)cd_size, (unsigned long long)cd_end);
        return FUTOIN_ZIP_MALFORMED;
    }
    if (cd_size > FUTOIN_ZIP_MAX_DIRECTORY) {
        say(err, errlen, "central directory of %llu bytes: more than this reader takes",
            (unsigned long long)cd_size);
        return FUTOIN_ZIP_UNSUPPORTED;
    }
    d->base = cd_end - cd_size - cd_offset;
    d->offset = cd_end - cd_size;
    d->size = cd_size;
    return FUTOIN_ZIP_OK;
}

/* The ZIP64 extra field (id 1) of a central header replaces the saturated
 * fields, in this order: uncompressed size, compressed size, local header
 * offset. */
static int zip64_fields(const unsigned char* extra, size_t len, uint64_t* usize,
                        uint64_t* csize, uint64_t* local)
{
    while (len >= 4) {
        uint16_t id = le16(extra), n = le16(extra + 2);
        if ((size_t)n > len - 4) {
            return -1;
        }
        if (id == 1) {
            const unsigned char* f = extra + 4;
            size_t left = n;
            uint64_t* want[3] = {usize, csize, local};
            for (int i = 0; i < 3; ++i) {
                if (*want[i] != 0xFFFFFFFFu) {
                    continue;
                }
                if (left < 8) {
                    return -1;
                }
                *want[i] = le64(f);
                f += 8;
                left -= 8;
            }
            return 0;
        }
        extra += 4 + (size_t)n;
        len -= 4 + (size_t)n;
    }
    /* no ZIP64 field: a saturated value is then the value itself */
    return 0;
}

/* The local header of the entry: its name must be the same, and its data
 * (after the name and the local extra field) must end before the
 * directory begins. */
static int locate_data(futoin_zip_read_fn read, void* ctx, const directory* d,
                       uint64_t local, const char* name, size_t name_len,
                       uint64_t size, futoin_zip_entry* out, char* err,
                       size_t errlen)
{
    unsigned char h[LOCAL_LEN];
    unsigned char* lname;
    uint64_t at, data;
    if (local > d->offset - d->base || d->offset - d->base - local < LOCAL_LEN) {
        say(err, errlen, "entry '%s': local header offset %llu out of bounds", name,
            (unsigned long long)local);
        return FUTOIN_ZIP_MALFORMED;
    }
    at = d->base + local;
    if (read(ctx, at, h, sizeof(h)) != 0) {
        say(err, errlen, "entry '%s': cannot read its local header", name);
        return FUTOIN_ZIP_IO;
    }
    if (le32(h) != SIG_LOCAL || le16(h + 26) != name_len) {
        say(err, errlen, "entry '%s': bad local header", name);
        return FUTOIN_ZIP_MALFORMED;
    }
    if (le16(h + 8) != 0) {
        say(err, errlen, "entry '%s': compressed (method %u) in its local header", name,
            le16(h + 8));
        return FUTOIN_ZIP_MALFORMED;
    }
    data = at + LOCAL_LEN + name_len + le16(h + 28);
    if (data > d->offset || d->offset - data < size) {
        say(err, errlen, "entry '%s': %llu bytes at %llu run past the directory", name,
            (unsigned long long)size, (unsigned long long)data);
        return FUTOIN_ZIP_MALFORMED;
    }
    lname = malloc(name_len ? name_len : 1);
    if (!lname) {
        say(err, errlen, "out of memory");
        return FUTOIN_ZIP_NOMEM;
    }
    if (read(ctx, at + LOCAL_LEN, lname, name_len) != 0) {
        free(lname);
        say(err, errlen, "entry '%s': cannot read its local name", name);
        return FUTOIN_ZIP_IO;
    }
    if (memcmp(lname, name, name_len) != 0) {
        free(lname);
        say(err, errlen, "entry '%s': its local header names another file", name);
        return FUTOIN_ZIP_MALFORMED;
    }
    free(lname);
    out->offset = data;
    out->size = size;
    return FUTOIN_ZIP_OK;
}

int futoin__zip_find(futoin_zip_read_fn read, void* ctx, uint64_t size,
                     const char* name, futoin_zip_entry* out, char* err,
                     size_t errlen)
{
    directory d;
    unsigned char* cd;
    size_t name_len, pos = 0;
    int rc, hits = 0;
    uint64_t hit_local = 0, hit_size = 0;
    uint32_t hit_crc = 0;
    if (!read || !name || !out) {
        say(err, errlen, "bad arguments");
        return FUTOIN_ZIP_MALFORMED;
    }
    name_len = strlen(name);
    rc = find_directory(read, ctx, size, &d, err, errlen);
    if (rc != FUTOIN_ZIP_OK) {
        return rc;
    }
    cd = malloc(d.size ? (size_t)d.size : 1);
    if (!cd) {
        say(err, errlen, "out of memory for a directory of %llu bytes",
            (unsigned long long)d.size);
        return FUTOIN_ZIP_NOMEM;
    }
    if (read(ctx, d.offset, cd, (size_t)d.size) != 0) {
        free(cd);
        say(err, errlen, "cannot read the central directory");
        return FUTOIN_ZIP_IO;
    }
    while (pos < d.size) {
        const unsigned char* h = cd + pos;
        size_t n, m, k, left = (size_t)d.size - pos;
        uint64_t usize, csize, local;
        if (left < CENTRAL_LEN || le32(h) != SIG_CENTRAL) {
            free(cd);
            say(err, errlen, "bad central directory header at %zu", pos);
            return FUTOIN_ZIP_MALFORMED;
        }
        n = le16(h + 28);
        m = le16(h + 30);
        k = le16(h + 32);
        if (n + m + k > left - CENTRAL_LEN) {
            free(cd);
            say(err, errlen, "central directory header at %zu runs past the directory", pos);
            return FUTOIN_ZIP_MALFORMED;
        }
        if (n == name_len && memcmp(h + CENTRAL_LEN, name, n) == 0) {
            uint16_t flags = le16(h + 8), method = le16(h + 10);
            if (++hits > 1) {
                free(cd);
                say(err, errlen, "entry '%s' appears twice", name);
                return FUTOIN_ZIP_MALFORMED;
            }
            if (flags & 1u) {
                free(cd);
                say(err, errlen, "entry '%s' is encrypted", name);
                return FUTOIN_ZIP_UNSUPPORTED;
            }
            if (method != 0) {
                free(cd);
                say(err, errlen, "entry '%s' is compressed (method %u), not stored", name,
                    method);
                return FUTOIN_ZIP_UNSUPPORTED;
            }
            usize = le32(h + 24);
            csize = le32(h + 20);
            local = le32(h + 42);
            if (zip64_fields(h + CENTRAL_LEN + n, m, &usize, &csize, &local) != 0) {
                free(cd);
                say(err, errlen, "entry '%s': bad ZIP64 extra field", name);
                return FUTOIN_ZIP_MALFORMED;
            }
            if (usize != csize) {
                free(cd);
                say(err, errlen, "entry '%s' is stored, yet %llu bytes packed and %llu unpacked",
                    name, (unsigned long long)csize, (unsigned long long)usize);
                return FUTOIN_ZIP_MALFORMED;
            }
            hit_local = local;
            hit_size = usize;
            hit_crc = le32(h + 16);
        }
        pos += CENTRAL_LEN + n + m + k;
    }
    free(cd);
    if (!hits) {
        say(err, errlen, "no entry '%s'", name);
        return FUTOIN_ZIP_NOT_FOUND;
    }
    out->crc32 = hit_crc;
    return locate_data(read, ctx, &d, hit_local, name, name_len, hit_size, out, err,
                       errlen);
}

/* ---- readers ------------------------------------------------------------ */

static int read_fd(void* ctx, uint64_t offset, void* buf, size_t len)
{
    int fd = *(int*)ctx;
    unsigned char* p = buf;
    while (len > 0) {
        ssize_t n;
        if (offset > (uint64_t)INT64_MAX) {
            return -1;
        }
        n = pread(fd, p, len, (off_t)offset);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

int futoin__zip_find_fd(int fd, const char* name, futoin_zip_entry* out,
                        char* err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        say(err, errlen, "not a regular file");
        return FUTOIN_ZIP_IO;
    }
    return futoin__zip_find(read_fd, &fd, (uint64_t)st.st_size, name, out, err, errlen);
}

typedef struct mem
{
    const unsigned char* p;
    size_t len;
} mem;

static int read_mem(void* ctx, uint64_t offset, void* buf, size_t len)
{
    const mem* m = ctx;
    if (offset > m->len || m->len - offset < len) {
        return -1;
    }
    memcpy(buf, m->p + offset, len);
    return 0;
}

int futoin__zip_find_mem(const void* zip, size_t len, const char* name,
                         futoin_zip_entry* out, char* err, size_t errlen)
{
    mem m = {zip, len};
    return futoin__zip_find(read_mem, &m, len, name, out, err, errlen);
}

int futoin__zip_read_mem(const void* zip, size_t len, const futoin_zip_entry* e,
                         void* dst, size_t dstlen, char* err, size_t errlen)
{
    mem m = {zip, len};
    return futoin__zip_read(read_mem, &m, e, dst, dstlen, err, errlen);
}

/* ---- reading the data ------------------------------------------------- */

int futoin__zip_read(futoin_zip_read_fn read, void* ctx,
                     const futoin_zip_entry* e, void* dst, size_t dstlen,
                     char* err, size_t errlen)
{
    uint32_t crc;
    if (e->size > dstlen) {
        say(err, errlen, "%llu bytes do not fit in %zu", (unsigned long long)e->size, dstlen);
        return FUTOIN_ZIP_MALFORMED;
    }
    if (read(ctx, e->offset, dst, (size_t)e->size) != 0) {
        say(err, errlen, "cannot read %llu bytes at %llu", (unsigned long long)e->size,
            (unsigned long long)e->offset);
        return FUTOIN_ZIP_IO;
    }
    crc = futoin__zip_crc32(0, dst, (size_t)e->size);
    if (crc != e->crc32) {
        say(err, errlen, "CRC-32 %08x, the directory says %08x", crc, e->crc32);
        return FUTOIN_ZIP_CRC;
    }
    return FUTOIN_ZIP_OK;
}

static int write_all(int fd, const unsigned char* p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int futoin__zip_copy_fd(int zip_fd, const futoin_zip_entry* e, int out_fd,
                        char* err, size_t errlen)
{
    unsigned char buf[65536];
    uint64_t done = 0;
    uint32_t crc = 0;
    while (done < e->size) {
        size_t n = e->size - done < sizeof(buf) ? (size_t)(e->size - done) : sizeof(buf);
        if (read_fd(&zip_fd, e->offset + done, buf, n) != 0) {
            say(err, errlen, "cannot read the entry at %llu",
                (unsigned long long)(e->offset + done));
            return FUTOIN_ZIP_IO;
        }
        crc = futoin__zip_crc32(crc, buf, n);
        if (write_all(out_fd, buf, n) != 0) {
            say(err, errlen, "cannot write: %s", strerror(errno));
            return FUTOIN_ZIP_IO;
        }
        done += n;
    }
    if (crc != e->crc32) {
        say(err, errlen, "CRC-32 %08x, the directory says %08x", crc, e->crc32);
        return FUTOIN_ZIP_CRC;
    }
    return FUTOIN_ZIP_OK;
}

int futoin__zip_crc32_fd(int fd, uint32_t* crc, uint64_t* size)
{
    unsigned char buf[65536];
    struct stat st;
    uint64_t at = 0, len;
    uint32_t c = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return FUTOIN_ZIP_IO;
    }
    len = (uint64_t)st.st_size;
    while (at < len) {
        size_t n = len - at < sizeof(buf) ? (size_t)(len - at) : sizeof(buf);
        if (read_fd(&fd, at, buf, n) != 0) {
            return FUTOIN_ZIP_IO;
        }
        c = futoin__zip_crc32(c, buf, n);
        at += n;
    }
    *crc = c;
    *size = len;
    return FUTOIN_ZIP_OK;
}
