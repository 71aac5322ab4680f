/*
 * The zip reader of the host plug-in (runtime/adapter/zip_entry.c):
 *
 *  - the jar built by build.sh holds the Java host plug-in as the STORED
 *    entry native/linux-x86_64/futoin-hosts/libfutoin_host_java.so, and
 *    reading it back with nothing but the central directory gives exactly
 *    the plug-in built next to the jar (bytes, size, CRC-32);
 *  - zips made here cover what a jar may hold or be: a comment (with a
 *    false end signature inside it), a prefix before the archive, ZIP64
 *    end records and extra fields, an empty archive; and what must be
 *    refused: a compressed, an encrypted, a duplicated entry, a wrong CRC,
 *    a local header that disagrees, multi-disk archives;
 *  - fuzz-ish: every truncation of the jar's last 8 KiB and a sample of
 *    the rest, thousands of random byte changes of the jar's directory,
 *    end records and the entry's local header, every byte of a small zip
 *    set to several values, and random garbage: each returns one of the
 *    documented results, and when it says "found", the data it points at
 *    lies inside the file and reading it either matches the CRC or says
 *    that it does not. test.sh builds this program with ASan and UBSan, so
 *    any read out of bounds is a failure, not luck.
 *
 * usage: zip_test JAR PLUGIN   (PLUGIN: the libfutoin_host_java.so built
 * next to the jar). Last line "zip: N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "zip_entry.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "futoin_check.h" /* tests/include: CHECK, futoin_check_summary */

#define ENTRY "native/linux-x86_64/futoin-hosts/libfutoin_host_java.so"

static unsigned char* slurp(const char* path, size_t* len)
{
    FILE* f = fopen(path, "rb");
    unsigned char* p = NULL;
    long n;
    if (!f) {
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0
        && (p = malloc((size_t)n + 1)) != NULL && fread(p, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
    } else {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

/* One lookup of untrusted bytes: a documented result, and a "found" entry
 * inside the buffer whose read (when it is small: the CRC of the whole
 * plug-in thousands of times would only cost time) is either right or
 * says why not. */
static int probe(const unsigned char* zip, size_t len, const char* name)
{
    futoin_zip_entry e;
    char err[256];
    int rc = futoin__zip_find_mem(zip, len, name, &e, err, sizeof(err));
    if (rc < FUTOIN_ZIP_NOMEM || rc > FUTOIN_ZIP_OK) {
        return -100;
    }
    if (rc == FUTOIN_ZIP_OK) {
        unsigned char* buf;
        if (e.offset > len || len - e.offset < e.size) {
            return -101; /* points outside the bytes it was given */
        }
        if (e.size > 8192) {
            return rc;
        }
        buf = malloc(e.size ? (size_t)e.size : 1);
        if (!buf) {
            return -102;
        }
        rc = futoin__zip_read_mem(zip, len, &e, buf, (size_t)e.size, err, sizeof(err));
        free(buf);
        if (rc != FUTOIN_ZIP_OK && rc != FUTOIN_ZIP_CRC) {
            return -103;
        }
    }
    return rc;
}

/* ---- a small zip writer ------------------------------------------------- */

typedef struct buf
{
    unsigned char b[8192];
    size_t n;
} buf;

static void put(buf* z, const void* p, size_t n)
{
    if (z->n + n <= sizeof(z->b)) {
        memcpy(z->b + z->n, p, n);
    }
    z->n += n;
}

static void u16(buf* z, unsigned v)
{
    unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(z, b, 2);
}

static void u32(buf* z, uint32_t v)
{
    u16(z, v & 0xFFFF);
    u16(z, v >> 16);
}

static void u64(buf* z, uint64_t v)
{
    u32(z, (uint32_t)v);
    u32(z, (uint32_t)(v >> 32));
}

typedef struct spec
{
    const char* prefix;      /* bytes before the archive */
    const char* names[3];    /* entries (NULL ends) */
    const char* data;        /* every entry's data */
    unsigned method;         /* of every entry */
    unsigned flags;
    int bad_crc;             /* the directory's CRC is off by one */
    const char* local_name;  /* the local header's name, when it differs */
    int packed_extra;        /* compressed size = size + this */
    int zip64;               /* ZIP64 end records and extra fields */
    const char* comment;
    unsigned disk;           /* the end record's disk numbers */
} spec;

static size_t make_zip(buf* z, const spec* s)
{
    uint32_t offs[3];
    size_t dlen = strlen(s->data), cd_at, cd_size, nent = 0;
    uint32_t crc = futoin__zip_crc32(0, s->data, dlen) + (s->bad_crc ? 1 : 0);
    z->n = 0;
    if (s->prefix) {
        put(z, s->prefix, strlen(s->prefix));
    }
    for (int i = 0; i < 3 && s->names[i]; ++i, ++nent) {
        const char* ln = s->local_name ? s->local_name : s->names[i];
        offs[i] = (uint32_t)(z->n - (s->prefix ? strlen(s->prefix) : 0));
        u32(z, 0x04034b50u);
        u16(z, 20);
        u16(z, s->flags);
        u16(z, s->method);
        u16(z, 0);
        u16(z, 0);
        u32(z, crc);
        u32(z, (uint32_t)dlen + (uint32_t)s->packed_extra);
        u32(z, (uint32_t)dlen);
        u16(z, (unsigned)strlen(ln));
        u16(z, 0);
        put(z, ln, strlen(ln));
        put(z, s->data, dlen);
    }
    cd_at = z->n;
    for (size_t i = 0; i < nent; ++i) {
        size_t nl = strlen(s->names[i]);
        u32(z, 0x02014b50u);
        u16(z, 45);
        u16(z, 45);
        u16(z, s->flags);
        u16(z, s->method);
        u16(z, 0);
        u16(z, 0);
        u32(z, crc);
        u32(z, s->zip64 ? 0xFFFFFFFFu : (uint32_t)dlen + (uint32_t)s->packed_extra);
        u32(z, s->zip64 ? 0xFFFFFFFFu : (uint32_t)dlen);
        u16(z, (unsigned)nl);
        u16(z, s->zip64 ? 4 + 24 : 0);
        u16(z, 0);
        u16(z, 0);
        u16(z, 0);
        u32(z, 0);
        u32(z, s->zip64 ? 0xFFFFFFFFu : offs[i]);
        put(z, s->names[i], nl);
        if (s->zip64) {
            u16(z, 1);
            u16(z, 24);
            u64(z, dlen);
            u64(z, dlen + (uint64_t)s->packed_extra);
            u64(z, offs[i]);
        }
    }
    cd_size = z->n - cd_at;
    if (s->zip64) {
        size_t rec_at = z->n - (s->prefix ? strlen(s->prefix) : 0);
        u32(z, 0x06064b50u);
        u64(z, 44);
        u16(z, 45);
        u16(z, 45);
        u32(z, 0);
        u32(z, 0);
        u64(z, nent);
        u64(z, nent);
        u64(z, cd_size);
        u64(z, cd_at - (s->prefix ? strlen(s->prefix) : 0));
        u32(z, 0x07064b50u);
        u32(z, 0);
        u64(z, rec_at + (s->prefix ? strlen(s->prefix) : 0));
        u32(z, 1);
    }
    u32(z, 0x06054b50u);
    u16(z, s->disk);
    u16(z, s->disk);
    u16(z, s->zip64 ? 0xFFFF : (unsigned)nent);
    u16(z, s->zip64 ? 0xFFFF : (unsigned)nent);
    u32(z, s->zip64 ? 0xFFFFFFFFu : (uint32_t)cd_size);
    u32(z, s->zip64 ? 0xFFFFFFFFu : (uint32_t)(cd_at - (s->prefix ? strlen(s->prefix) : 0)));
    u16(z, s->comment ? (unsigned)strlen(s->comment) : 0);
    if (s->comment) {
        put(z, s->comment, strlen(s->comment));
    }
    return z->n;
}

/* find + read of `name` in the zip of `s`: the result, and the data read */
static int lookup(const spec* s, const char* name, char* data, size_t cap, char* err)
{
    static buf z;
    futoin_zip_entry e;
    size_t n = make_zip(&z, s);
    int rc;
    if (n > sizeof(z.b)) {
        return -99;
    }
    rc = futoin__zip_find_mem(z.b, n, name, &e, err, 256);
    if (rc != FUTOIN_ZIP_OK) {
        return rc;
    }
    if (e.size >= cap) {
        return -98;
    }
    rc = futoin__zip_read_mem(z.b, n, &e, data, cap, err, 256);
    data[rc == FUTOIN_ZIP_OK ? e.size : 0] = 0;
    return rc;
}

static void made_zips(void)
{
    char data[128], err[256];
    const char* name = ENTRY;
    spec base = {.names = {"META-INF/MANIFEST.MF", ENTRY, "z"}, .data = "plug-in bytes"};
    spec s;
    int rc;

    rc = lookup(&base, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_OK && strcmp(data, "plug-in bytes") == 0, "plain: %d %s", rc, err);
    rc = lookup(&base, "native/linux-x86_64/futoin-hosts/libfutoin_host_javaX.so", data,
                sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_NOT_FOUND && strstr(err, "no entry"), "missing: %d %s", rc, err);
    rc = lookup(&base, "native/linux-x86_64/futoin-hosts/libfutoin_host_jav", data, sizeof(data),
                err);
    CHECK(rc == FUTOIN_ZIP_NOT_FOUND, "a prefix of a name is not the name: %d", rc);

    s = base;
    s.comment = "a comment with a false end record: PK\x05\x06 .........................";
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_OK && strcmp(data, "plug-in bytes") == 0, "comment: %d %s", rc, err);

    s = base;
    s.prefix = "#!/bin/sh\nexec java -jar \"$0\" \"$@\"\n";
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_OK && strcmp(data, "plug-in bytes") == 0, "prefix: %d %s", rc, err);

    s = base;
    s.zip64 = 1;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_OK && strcmp(data, "plug-in bytes") == 0, "zip64: %d %s", rc, err);
    s.prefix = "prefix";
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_OK && strcmp(data, "plug-in bytes") == 0, "zip64 + prefix: %d %s", rc,
          err);

    s = base;
    s.names[0] = s.names[1] = s.names[2] = NULL;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_NOT_FOUND, "empty zip: %d %s", rc, err);

    s = base;
    s.method = 8;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_UNSUPPORTED && strstr(err, "compressed (method 8)"),
          "deflated: %d %s", rc, err);

    s = base;
    s.flags = 1;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_UNSUPPORTED && strstr(err, "encrypted"), "encrypted: %d %s", rc, err);

    s = base;
    s.names[2] = ENTRY;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_MALFORMED && strstr(err, "twice"), "duplicate: %d %s", rc, err);

    s = base;
    s.bad_crc = 1;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_CRC && strstr(err, "CRC"), "bad CRC: %d %s", rc, err);

    s = base;
    s.names[0] = ENTRY;
    s.names[1] = NULL;
    s.local_name = "native/linux-x86_64/futoin-hosts/libfutoin_host_javX.so";
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_MALFORMED && strstr(err, "names another"), "local name: %d %s", rc,
          err);

    s = base;
    s.packed_extra = 3;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_MALFORMED && strstr(err, "packed"), "sizes differ: %d %s", rc, err);

    s = base;
    s.disk = 1;
    rc = lookup(&s, name, data, sizeof(data), err);
    CHECK(rc == FUTOIN_ZIP_UNSUPPORTED && strstr(err, "multi-disk"), "multi-disk: %d %s", rc,
          err);

    /* every byte of a small zip (and of its ZIP64 form) set to values
     * that matter (0, 1, 0x7f, 0xff, and the byte plus one) */
    for (int z64 = 0; z64 <= 1; ++z64) {
        static buf z;
        static const int vals[] = {0, 1, 0x7f, 0xff, -1};
        int bad = 0;
        size_t n;
        s = base;
        s.zip64 = z64;
        n = make_zip(&z, &s);
        for (size_t i = 0; i < n; ++i) {
            unsigned char keep = z.b[i];
            for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); ++v) {
                z.b[i] = vals[v] < 0 ? (unsigned char)(keep + 1) : (unsigned char)vals[v];
                bad += probe(z.b, n, name) < -50;
            }
            z.b[i] = keep;
        }
        CHECK(bad == 0, "small zip%s: %d byte changes gave an undocumented result",
              z64 ? " (ZIP64)" : "", bad);
    }
}

/* ---- the jar ------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void the_jar(const char* jar, const char* plugin)
{
    char err[256];
    futoin_zip_entry e, other;
    size_t jlen = 0, plen = 0;
    unsigned char* j = slurp(jar, &jlen);
    unsigned char* p = slurp(plugin, &plen);
    int fd = open(jar, O_RDONLY | O_CLOEXEC);
    int pfd = open(plugin, O_RDONLY | O_CLOEXEC);
    int rc;
    CHECK(j && p && fd >= 0 && pfd >= 0, "cannot read %s or %s", jar, plugin);
    if (!j || !p || fd < 0 || pfd < 0) {
        return;
    }

    /* the entry, from the file, as the plug-in next to the jar */
    rc = futoin__zip_find_fd(fd, ENTRY, &e, err, sizeof(err));
    CHECK(rc == FUTOIN_ZIP_OK, "%s: %s: %d %s", jar, ENTRY, rc, err);
    if (rc != FUTOIN_ZIP_OK) {
        e.offset = jlen > 4096 ? jlen / 2 : 0; /* the fuzzing below still runs */
        e.size = 0;
    }
    if (rc == FUTOIN_ZIP_OK) {
        char tmpl[] = "/tmp/futoin-zip-test-XXXXXX";
        int out = mkstemp(tmpl);
        uint32_t crc = 0;
        uint64_t size = 0;
        CHECK(e.size == plen, "entry %llu bytes, the plug-in %zu", (unsigned long long)e.size,
              plen);
        CHECK(futoin__zip_crc32_fd(pfd, &crc, &size) == FUTOIN_ZIP_OK && crc == e.crc32
                      && size == plen,
              "the plug-in's CRC %08x, the entry's %08x", crc, e.crc32);
        CHECK(e.size <= jlen && memcmp(j + e.offset, p, plen) == 0,
              "the bytes at the entry's offset are not the plug-in");
        CHECK(out >= 0, "mkstemp");
        if (out >= 0) {
            size_t got = 0;
            unsigned char* back;
            unlink(tmpl);
            rc = futoin__zip_copy_fd(fd, &e, out, err, sizeof(err));
            CHECK(rc == FUTOIN_ZIP_OK, "copy: %d %s", rc, err);
            lseek(out, 0, SEEK_SET);
            back = malloc(plen + 1);
            while (back && got < plen + 1) {
                ssize_t n = read(out, back + got, plen + 1 - got);
                if (n <= 0) {
                    break;
                }
                got += (size_t)n;
            }
            CHECK(back && got == plen && memcmp(back, p, plen) == 0,
                  "the copy is not the plug-in (%zu bytes)", got);
            free(back);
            close(out);
        }
    }
    /* the classes are compressed: found, but not handed out */
    rc = futoin__zip_find_fd(fd, "org/futoin/async/Tool.class", &other, err, sizeof(err));
    CHECK(rc == FUTOIN_ZIP_UNSUPPORTED && strstr(err, "compressed"), "Tool.class: %d %s", rc,
          err);
    rc = futoin__zip_find_fd(fd, "native/linux-x86_64/futoin-hosts/", &other, err, sizeof(err));
    CHECK(rc == FUTOIN_ZIP_OK || rc == FUTOIN_ZIP_NOT_FOUND || rc == FUTOIN_ZIP_UNSUPPORTED,
          "the folder entry: %d %s", rc, err);
    rc = futoin__zip_find_fd(pfd, ENTRY, &other, err, sizeof(err));
    CHECK(rc == FUTOIN_ZIP_MALFORMED && strstr(err, "not a zip"), "the .so is no zip: %d %s", rc,
          err);

    /* truncations: the last 8 KiB byte by byte, then a sample */
    {
        int bad = 0;
        size_t from = jlen > 8192 ? jlen - 8192 : 0;
        for (size_t n = from; n < jlen; ++n) {
            bad += probe(j, n, ENTRY) < -50;
        }
        for (int i = 0; i < 2000; ++i) {
            bad += probe(j, (size_t)(next() % jlen), ENTRY) < -50;
        }
        CHECK(bad == 0, "truncated jars: %d undocumented results", bad);
        /* the jar's head cut off: the offsets no longer fit */
        CHECK(probe(j + 1, jlen - 1, ENTRY) == FUTOIN_ZIP_MALFORMED, "a jar without its first byte");
    }
    /* random changes of the directory, the end record and the local
     * header; each run starts from the jar as it was */
    {
        unsigned char* m = malloc(jlen);
        size_t hot_from = e.offset > 256 ? (size_t)e.offset - 256 : 0;
        size_t dir_from = jlen > 65536 ? jlen - 65536 : 0;
        int bad = 0;
        if (m) {
            memcpy(m, j, jlen);
        }
        for (int i = 0; m && i < 20000; ++i) {
            size_t where[4];
            int changes = 1 + (int)(next() % 4);
            for (int c = 0; c < changes; ++c) {
                size_t at = (i & 1) ? dir_from + (size_t)(next() % (jlen - dir_from))
                                    : hot_from + (size_t)(next() % (e.offset + 64 - hot_from));
                where[c] = at < jlen ? at : jlen - 1;
                m[where[c]] = (unsigned char)next();
            }
            bad += probe(m, jlen, ENTRY) < -50;
            for (int c = 0; c < changes; ++c) { /* as it was, for the next run */
                m[where[c]] = j[where[c]];
            }
        }
        CHECK(m && bad == 0, "%d of 20000 changed jars gave an undocumented result", bad);
        free(m);
    }
    /* garbage: random bytes, some with end signatures planted */
    {
        unsigned char g[4096];
        int bad = 0;
        for (int i = 0; i < 5000; ++i) {
            size_t n = (size_t)(next() % sizeof(g));
            for (size_t k = 0; k < n; ++k) {
                g[k] = (unsigned char)next();
            }
            if (n >= 22 && (i & 1)) {
                size_t at = n - 22 - (size_t)(next() % (n - 21 > 64 ? 64 : n - 21));
                memcpy(g + at, "PK\x05\x06", 4);
                g[at + 20] = (unsigned char)(n - at - 22);
                g[at + 21] = 0;
            }
            bad += probe(g, n, ENTRY) < -50;
        }
        CHECK(bad == 0, "%d of 5000 garbage buffers gave an undocumented result", bad);
    }
    close(fd);
    close(pfd);
    free(j);
    free(p);
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s JAR PLUGIN\n", argv[0]);
        return 2;
    }
    CHECK(futoin__zip_crc32(0, "123456789", 9) == 0xCBF43926u, "CRC-32 check value");
    made_zips();
    the_jar(argv[1], argv[2]);
    return futoin_check_summary("zip");
}
