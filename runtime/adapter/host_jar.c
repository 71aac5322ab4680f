/*
 * A language plug-in carried in a jar (the Java binding's jar holds its
 * host plug-in as a STORED entry): taken out into a private cache, since
 * dlopen() needs a file.
 *
 * The cache is $XDG_CACHE_HOME/futoin_async/ (else ~/.cache/futoin_async/),
 * made 0700 and refused when it is not the user's own or when group or
 * others may write to it: whoever can write there chooses the code this
 * process runs. A plug-in is cached under a name made of its CRC-32 and
 * size (the zip directory's), written to a temporary name and renamed
 * into place, so that a reader never sees half a file and two processes
 * extracting at once both end with a whole one. A cached file is used
 * only when its size and CRC-32 match the jar's entry again; any other
 * file of that name (a tampered or truncated one) is replaced.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "adapter/adapter.h"
#include "adapter/zip_entry.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mkdir(path) unless it exists; 0, or -1 with errno. */
static int make_dir(const char* path)
{
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* The cache folder, made if missing and checked; its path in `dir` and an
 * open descriptor (O_NOFOLLOW: the folder itself is never a link), or -1
 * with `err` saying why. */
static int open_cache(char* dir, size_t dirlen, char* err, size_t errlen)
{
    const char* xdg = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    char base[PATH_MAX];
    struct stat st;
    int fd;
    if (xdg && xdg[0] == '/') { /* the XDG rule: a relative value is ignored */
        snprintf(base, sizeof(base), "%s", xdg);
    } else {
        if (!home || home[0] != '/') {
            struct passwd pw, *found = NULL;
            char buf[4096];
            if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &found) != 0 || !found
                || !pw.pw_dir || pw.pw_dir[0] != '/') {
                snprintf(err, errlen,
                         "no cache folder to take the plug-in out to (set "
                         "XDG_CACHE_HOME or HOME to an absolute path)");
                return -1;
            }
            home = pw.pw_dir;
        }
        if (snprintf(base, sizeof(base), "%s/.cache", home) >= (int)sizeof(base)) {
            snprintf(err, errlen, "the cache folder's path is too long");
            return -1;
        }
    }
    if (snprintf(dir, dirlen, "%s/futoin_async", base) >= (int)dirlen
        || make_dir(base) != 0 || make_dir(dir) != 0) {
        snprintf(err, errlen, "cannot make the cache folder %.300s: %s", dir,
                 strerror(errno));
        return -1;
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot open the cache folder %.300s: %s", dir,
                 strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen,
                 "the cache folder %.300s is not this user's own (owner uid "
                 "%u): refused",
                 dir, (unsigned)st.st_uid);
        close(fd);
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        /* what is in it may have been put there by someone else */
        snprintf(err, errlen,
                 "the cache folder %.300s may be written by group or others "
                 "(mode %04o): refused",
                 dir, (unsigned)(st.st_mode & 07777));
        close(fd);
        return -1;
    }
    if ((st.st_mode & 07777) != 0700) {
        fchmod(fd, 0700); /* readable by others: made private, nothing lost */
    }
    return fd;
}

/* Whether `name` in the cache is a regular file of ours with exactly the
 * entry's size and CRC-32. */
static bool cached_ok(int dirfd, const char* name, const futoin_zip_entry* e)
{
    struct stat st;
    uint32_t crc;
    uint64_t size;
    bool ok;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
         && (uint64_t)st.st_size == e->size
         && futoin__zip_crc32_fd(fd, &crc, &size) == FUTOIN_ZIP_OK
         && crc == e->crc32 && size == e->size;
    close(fd);
    return ok;
}

/* Write the entry to a temporary file in the cache, then rename it to
 * `name`. 0, or -1 with `err` saying why (nothing left behind). */
static int extract(int jarfd, const futoin_zip_entry* e, int dirfd,
                   const char* name, char* err, size_t errlen)
{
    static _Atomic unsigned counter;
    char tmp[96], why[256];
    int out = -1, rc;
    for (int attempt = 0; attempt < 16 && out < 0; ++attempt) {
        snprintf(tmp, sizeof(tmp), ".tmp-%ld-%u-%lx", (long)getpid(),
                 atomic_fetch_add(&counter, 1u), (unsigned long)time(NULL));
        out = openat(dirfd, tmp,
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
        if (out < 0 && errno != EEXIST) {
            break;
        }
    }
    if (out < 0) {
        snprintf(err, errlen, "cannot write to the cache folder: %s",
                 strerror(errno));
        return -1;
    }
    rc = futoin__zip_copy_fd(jarfd, e, out, why, sizeof(why));
    if (close(out) != 0 && rc == FUTOIN_ZIP_OK) {
        snprintf(why, sizeof(why), "cannot write: %s", strerror(errno));
        rc = FUTOIN_ZIP_IO;
    }
    if (rc == FUTOIN_ZIP_OK && renameat(dirfd, tmp, dirfd, name) != 0) {
        snprintf(why, sizeof(why), "cannot rename it into place: %s",
                 strerror(errno));
        rc = FUTOIN_ZIP_IO;
    }
    if (rc != FUTOIN_ZIP_OK) {
        unlinkat(dirfd, tmp, 0);
        snprintf(err, errlen, "taking the plug-in out failed: %s", why);
        return -1;
    }
    return 0;
}

int futoin__host_jar_extract(const char* jar, const char* entry, char* path,
                             size_t pathlen, char* err, size_t errlen)
{
    char dir[PATH_MAX], name[96], why[512];
    futoin_zip_entry e;
    int jarfd, dirfd, rc;
    const char* base = strrchr(entry, '/');
    struct stat st;
    jarfd = open(jar, O_RDONLY | O_CLOEXEC);
    if (jarfd < 0 || fstat(jarfd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (jarfd >= 0) {
            close(jarfd);
        }
        return 1; /* not there: nothing to say, as for a missing file */
    }
    rc = futoin__zip_find_fd(jarfd, entry, &e, why, sizeof(why));
    if (rc == FUTOIN_ZIP_NOT_FOUND
        || (rc == FUTOIN_ZIP_MALFORMED && strncmp(why, "not a zip", 9) == 0)) {
        close(jarfd);
        return 1; /* another jar, or not a zip at all */
    }
    if (rc != FUTOIN_ZIP_OK) {
        close(jarfd);
        snprintf(err, errlen, "%s: %s%s", jar, why,
                 rc == FUTOIN_ZIP_UNSUPPORTED
                         ? " (the plug-in must be stored uncompressed: "
                           "`jar --update --no-compress`, as "
                           "bindings/java/build.sh does)"
                         : "");
        return -1;
    }
    dirfd = open_cache(dir, sizeof(dir), err, errlen);
    if (dirfd < 0) {
        close(jarfd);
        return -1;
    }
    /* libfutoin_host_java.so -> libfutoin_host_java-<crc>-<size>.so */
    base = base ? base + 1 : entry;
    snprintf(name, sizeof(name), "%.*s-%08x-%llu.so",
             (int)(strlen(base) > 40 ? 40 : strlen(base) - 3), base,
             (unsigned)e.crc32, (unsigned long long)e.size);
    rc = 0;
    if (!cached_ok(dirfd, name, &e)) {
        /* missing, or not what the jar holds: (re)written, never trusted */
        unlinkat(dirfd, name, 0);
        rc = extract(jarfd, &e, dirfd, name, why, sizeof(why));
        if (rc != 0) {
            snprintf(err, errlen, "%s into %s: %s", jar, dir, why);
        }
    }
    close(dirfd);
    close(jarfd);
    if (rc == 0 && snprintf(path, pathlen, "%s/%s", dir, name) >= (int)pathlen) {
        snprintf(err, errlen, "the cache path %s/%s is too long", dir, name);
        rc = -1;
    }
    return rc;
}
