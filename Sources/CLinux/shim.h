// Linux calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module does not set.
#ifndef FAVFS_CLINUX_SHIM_H
#define FAVFS_CLINUX_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <linux/falloc.h>

/// rename(2) that fails with EEXIST instead of replacing what is at `newpath` (files and
/// folders alike, atomically). 0, or -1 with errno set.
static inline int favfs_rename_noreplace(const char *oldpath, const char *newpath) {
    return renameat2(AT_FDCWD, oldpath, AT_FDCWD, newpath, RENAME_NOREPLACE);
}

/// Frees the disk blocks of `len` bytes at `offset` of a (sparse) file; its size stays and the
/// range reads as zeros. 0, or -1 with errno set.
static inline int favfs_punch_hole(int fd, off_t offset, off_t len) {
    return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, len);
}
#endif
