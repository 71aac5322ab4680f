/*
 * zip_entry.h: find and read one STORED entry of a zip file (a jar) with
 * nothing but the zip's own directory: no zlib, no allocation beyond one
 * copy of the central directory, every offset and length checked against
 * the file before it is used.
 *
 * Why: the jar carries the Java host plug-in as the entry
 * native/linux-x86_64/futoin-hosts/libfutoin_host_java.so, stored
 * uncompressed (zip method 0), so that C code (the plug-in looking for the
 * jar it came from, the core's plug-in discovery on CLASSPATH) can find it
 * and extract it without inflating anything.
 *
 * What it reads (APPNOTE.TXT 6.3): the end of central directory record
 * (searched backwards over at most 64 KiB of comment), the ZIP64 end
 * record when the classic one says so, the central directory (one copy in
 * memory, at most FUTOIN_ZIP_MAX_DIRECTORY bytes), and the local header of
 * the entry found (for where its data begins). An entry is taken from the
 * central directory only: its CRC-32 and size are the directory's, and the
 * data read back is checked against that CRC. A name that appears twice is
 * refused (which copy would a reader take?); so are multi-disk archives,
 * encrypted entries and compressed ones (FUTOIN_ZIP_UNSUPPORTED: the
 * entry exists, but not in a form this reader can hand out).
 *
 * Self-contained (this header and zip_entry.c, C11 + POSIX pread): the
 * core's plug-in discovery (host_jar.c) and the Java host plug-in
 * (bindings/java/host/jvm_env.c, built from this same source) both use
 * it. Thread-safe: no global state. Internal: built with hidden
 * visibility into what uses it, never exported.
 */
#ifndef FUTOIN_ZIP_ENTRY_H
#define FUTOIN_ZIP_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the calls return: 0, or one of these negative values. */
enum
{
    FUTOIN_ZIP_OK = 0,
    FUTOIN_ZIP_NOT_FOUND = -1,   /**< a valid zip without that entry */
    FUTOIN_ZIP_MALFORMED = -2,   /**< not a zip, truncated, out of bounds */
    FUTOIN_ZIP_UNSUPPORTED = -3, /**< compressed, encrypted, multi-disk, too big */
    FUTOIN_ZIP_IO = -4,          /**< reading or writing failed */
    FUTOIN_ZIP_CRC = -5,         /**< the data does not match its CRC-32 */
    FUTOIN_ZIP_NOMEM = -6,       /**< out of memory */
};

/** The largest central directory read (one copy in memory). */
#define FUTOIN_ZIP_MAX_DIRECTORY (64u * 1024u * 1024u)

/** A stored entry found in the central directory. */
typedef struct futoin_zip_entry
{
    uint64_t offset; /**< where its data begins in the file */
    uint64_t size;   /**< its length (stored: the same packed and unpacked) */
    uint32_t crc32;  /**< its CRC-32, from the central directory */
} futoin_zip_entry;

/**
 * Read exactly `len` bytes at `offset` of the zip into `buf`.
 * @return 0, or -1 when that many bytes could not be read.
 */
typedef int (*futoin_zip_read_fn)(void* ctx, uint64_t offset, void* buf,
                                  size_t len);

/**
 * Find the entry `name` (exact bytes, '/' separated, as stored) of the zip
 * of `size` bytes read through `read`. On success `*out` says where its
 * data is; otherwise `err` (may be NULL) says why, e.g. "entry 'x' is
 * compressed (method 8), not stored".
 * @return FUTOIN_ZIP_OK, FUTOIN_ZIP_NOT_FOUND, FUTOIN_ZIP_MALFORMED,
 *         FUTOIN_ZIP_UNSUPPORTED, FUTOIN_ZIP_IO or FUTOIN_ZIP_NOMEM.
 */
int futoin__zip_find(futoin_zip_read_fn read, void* ctx, uint64_t size,
                     const char* name, futoin_zip_entry* out, char* err,
                     size_t errlen);

/** futoin__zip_find() on an open file (pread; the offset is not moved). */
int futoin__zip_find_fd(int fd, const char* name, futoin_zip_entry* out,
                        char* err, size_t errlen);

/** futoin__zip_find() on a zip in memory. */
int futoin__zip_find_mem(const void* zip, size_t len, const char* name,
                         futoin_zip_entry* out, char* err, size_t errlen);

/**
 * Read the data of `e` (found in the same zip) into `dst` of `dstlen`
 * bytes, which must hold e->size, and check it against e->crc32.
 * @return FUTOIN_ZIP_OK, FUTOIN_ZIP_IO, FUTOIN_ZIP_CRC, or
 *         FUTOIN_ZIP_MALFORMED when `dst` is too small.
 */
int futoin__zip_read(futoin_zip_read_fn read, void* ctx,
                     const futoin_zip_entry* e, void* dst, size_t dstlen,
                     char* err, size_t errlen);

/** futoin__zip_read() from a zip in memory. */
int futoin__zip_read_mem(const void* zip, size_t len, const futoin_zip_entry* e,
                         void* dst, size_t dstlen, char* err, size_t errlen);

/**
 * Copy the data of `e` from the zip open as `zip_fd` to `out_fd` (written
 * from its current position), in pieces, checking the CRC-32 at the end:
 * on FUTOIN_ZIP_CRC the bytes written must not be used.
 * @return FUTOIN_ZIP_OK, FUTOIN_ZIP_IO or FUTOIN_ZIP_CRC.
 */
int futoin__zip_copy_fd(int zip_fd, const futoin_zip_entry* e, int out_fd,
                        char* err, size_t errlen);

/** The CRC-32 of zip (ISO-HDLC) of `len` bytes, continuing `crc` (0 to
 *  start). */
uint32_t futoin__zip_crc32(uint32_t crc, const void* data, size_t len);

/** The CRC-32 and length of the regular file open as `fd` (read with
 *  pread from offset 0). @return FUTOIN_ZIP_OK or FUTOIN_ZIP_IO. */
int futoin__zip_crc32_fd(int fd, uint32_t* crc, uint64_t* size);

#ifdef __cplusplus
}
#endif

#endif
