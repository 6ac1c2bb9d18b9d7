// Linux calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module does not set,
// and those Swift cannot call or see (variadic syscall(2), macros).
#ifndef FAVFS_CLINUX_SHIM_H
#define FAVFS_CLINUX_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/falloc.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

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

/// lseek(2) to the first byte of data (SEEK_DATA) or of a hole (SEEK_HOLE) at or after
/// `offset`; -1 with errno set (ENXIO: none before the end of the file).
static inline off_t favfs_seek_data(int fd, off_t offset) { return lseek(fd, offset, SEEK_DATA); }
static inline off_t favfs_seek_hole(int fd, off_t offset) { return lseek(fd, offset, SEEK_HOLE); }

/// splice(2): moves `len` bytes between a pipe and another descriptor without copying them
/// through user space. The count moved, or -1 with errno set.
static inline ssize_t favfs_splice(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len, unsigned flags) {
    return splice(fd_in, off_in, fd_out, off_out, len, flags);
}

/// The calling thread's id: the pid the kernel puts in the FUSE requests of that thread.
static inline pid_t favfs_gettid(void) { return (pid_t)syscall(SYS_gettid); }

/// Opens the folder `path` as an O_PATH descriptor (close-on-exec). -1 with errno on failure.
static inline int favfs_open_folder_path(const char *path) { return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); }

/// Opens the folder `path` below `dirfd` as an O_PATH descriptor, refusing any symlink, any
/// `..` that leaves `dirfd` and any other mount on the way (openat2(2), Linux 5.6+): a name a
/// server sent can never lead outside the mount. -1 with errno on failure.
static inline int favfs_open_folder_beneath(int dirfd, const char *path) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

/// Whether `fd` is a FUSE file system's root whose inode is `ino` (statfs(2)'s FUSE_SUPER_MAGIC).
static inline int favfs_is_fuse_root(int fd, unsigned long ino) {
    struct statfs fs;
    struct stat st;
    if (fstatfs(fd, &fs) != 0 || fstat(fd, &st) != 0) return 0;
    return fs.f_type == 0x65735546 && st.st_ino == ino;
}

/// utimensat(2)'s "now" (a macro Swift does not import).
static inline long favfs_utime_now(void) { return UTIME_NOW; }
#endif
