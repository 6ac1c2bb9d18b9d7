// Typed wrappers for the libfuse 3.14 macros, bitfields and version-selected symbols
// that Swift cannot import directly.
#ifndef FAVFS_CFUSE_SHIM_H
#define FAVFS_CFUSE_SHIM_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <errno.h>
#include <string.h>

/// Runs the multithreaded loop with a 3.12+ loop config (the macro picks the versioned symbol).
static inline int favfs_session_loop_mt(struct fuse_session *se, unsigned max_threads, unsigned max_idle) {
    struct fuse_loop_config *cfg = fuse_loop_cfg_create();
    if (!cfg) return -ENOMEM;
    fuse_loop_cfg_set_clone_fd(cfg, 0);
    fuse_loop_cfg_set_max_threads(cfg, max_threads);
    fuse_loop_cfg_set_idle_threads(cfg, max_idle);
    int rc = fuse_session_loop_mt(se, cfg);
    fuse_loop_cfg_destroy(cfg);
    return rc;
}

/// Replies to a read with `size` bytes of `fd` at `offset`, without copying through user space
/// where the kernel allows (splice).
static inline int favfs_reply_data_fd(fuse_req_t req, int fd, off_t offset, size_t size) {
    struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = fd;
    buf.buf[0].pos = offset;
    return fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static inline void favfs_fi_set_keep_cache(struct fuse_file_info *fi, int on) { fi->keep_cache = on ? 1 : 0; }
static inline int favfs_fi_flags(const struct fuse_file_info *fi) { return fi->flags; }

/// Builds a `fuse_args` (FUSE_ARGS_INIT is a macro).
static inline struct fuse_args favfs_args_init(int argc, char **argv) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    return args;
}

/// Sets the connection's wants and limits in `init` (capability flags are macros).
static inline void favfs_conn_configure(struct fuse_conn_info *conn, unsigned max_readahead, unsigned max_background, unsigned max_read) {
    if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
    if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
    if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
    if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO) conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
    if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
    if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
    if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA; // we decide page-cache validity with keep_cache
    if (max_readahead) conn->max_readahead = max_readahead;
    if (max_background) conn->max_background = max_background;
    if (max_read) conn->max_read = max_read;
}

/// setattr's to_set bits (macros).
static inline int favfs_set_attr_mode(int s) { return (s & FUSE_SET_ATTR_MODE) != 0; }
static inline int favfs_set_attr_owner(int s) { return (s & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) != 0; }
static inline int favfs_set_attr_size(int s) { return (s & FUSE_SET_ATTR_SIZE) != 0; }
static inline int favfs_set_attr_mtime(int s) { return (s & FUSE_SET_ATTR_MTIME) != 0; }
static inline int favfs_set_attr_mtime_now(int s) { return (s & FUSE_SET_ATTR_MTIME_NOW) != 0; }

#endif
