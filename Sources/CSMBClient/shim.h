// libsmbclient's context API through plain functions: Swift calls the function pointers the
// context hands out awkwardly, and the credentials callback is C that reads the context's own
// user data (a Swift closure cannot be a C callback that captures).
#ifndef FAVFS_CSMBCLIENT_SHIM_H
#define FAVFS_CSMBCLIENT_SHIM_H

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <libsmbclient.h>

/// What the credentials callback answers. Owned by the Swift context object, which frees it
/// after the context.
struct favfs_smb_credentials {
    const char *domain;
    const char *user;
    const char *password;
};

static inline void favfs_smb_auth(SMBCCTX *c, const char *server, const char *share,
                                  char *workgroup, int workgroup_len, char *user, int user_len,
                                  char *password, int password_len) {
    (void)server; (void)share;
    const struct favfs_smb_credentials *cr = (const struct favfs_smb_credentials *)smbc_getOptionUserData(c);
    if (cr == NULL) return;
    if (cr->domain != NULL) snprintf(workgroup, (size_t)workgroup_len, "%s", cr->domain);
    snprintf(user, (size_t)user_len, "%s", cr->user != NULL ? cr->user : "");
    snprintf(password, (size_t)password_len, "%s", cr->password != NULL ? cr->password : "");
}

static inline void favfs_smb_use_credentials(SMBCCTX *c, const struct favfs_smb_credentials *cr) {
    smbc_setOptionUserData(c, (void *)cr);
    smbc_setFunctionAuthDataWithContext(c, favfs_smb_auth);
}

static inline int favfs_smb_stat(SMBCCTX *c, const char *url, struct stat *st) { return smbc_getFunctionStat(c)(c, url, st); }
static inline SMBCFILE *favfs_smb_open(SMBCCTX *c, const char *url, int flags, mode_t mode) { return smbc_getFunctionOpen(c)(c, url, flags, mode); }
static inline ssize_t favfs_smb_read(SMBCCTX *c, SMBCFILE *f, void *buf, size_t count) { return smbc_getFunctionRead(c)(c, f, buf, count); }
static inline ssize_t favfs_smb_write(SMBCCTX *c, SMBCFILE *f, const void *buf, size_t count) { return smbc_getFunctionWrite(c)(c, f, buf, count); }
static inline off_t favfs_smb_lseek(SMBCCTX *c, SMBCFILE *f, off_t offset, int whence) { return smbc_getFunctionLseek(c)(c, f, offset, whence); }
static inline int favfs_smb_fstat(SMBCCTX *c, SMBCFILE *f, struct stat *st) { return smbc_getFunctionFstat(c)(c, f, st); }
static inline int favfs_smb_close(SMBCCTX *c, SMBCFILE *f) { return smbc_getFunctionClose(c)(c, f); }
static inline SMBCFILE *favfs_smb_opendir(SMBCCTX *c, const char *url) { return smbc_getFunctionOpendir(c)(c, url); }
static inline int favfs_smb_closedir(SMBCCTX *c, SMBCFILE *d) { return smbc_getFunctionClosedir(c)(c, d); }
/// The next entry and its stat, or NULL at the end. The name is copied into `name` (NUL-ended,
/// cut at `name_len`), so nothing of libsmbclient's outlives the call.
static inline int favfs_smb_readdir(SMBCCTX *c, SMBCFILE *d, struct stat *st, char *name, size_t name_len) {
    const struct libsmb_file_info *fi = smbc_getFunctionReaddirPlus2(c)(c, d, st);
    if (fi == NULL) return 0;
    snprintf(name, name_len, "%s", fi->name != NULL ? fi->name : "");
    return 1;
}
static inline int favfs_smb_mkdir(SMBCCTX *c, const char *url, mode_t mode) { return smbc_getFunctionMkdir(c)(c, url, mode); }
static inline int favfs_smb_rmdir(SMBCCTX *c, const char *url) { return smbc_getFunctionRmdir(c)(c, url); }
static inline int favfs_smb_unlink(SMBCCTX *c, const char *url) { return smbc_getFunctionUnlink(c)(c, url); }
static inline int favfs_smb_rename(SMBCCTX *c, const char *from, const char *to) { return smbc_getFunctionRename(c)(c, from, c, to); }
static inline int favfs_smb_utimes(SMBCCTX *c, const char *url, long access_sec, long access_usec, long modified_sec, long modified_usec) {
    struct timeval tv[2];
    tv[0].tv_sec = access_sec; tv[0].tv_usec = access_usec;
    tv[1].tv_sec = modified_sec; tv[1].tv_usec = modified_usec;
    return smbc_getFunctionUtimes(c)(c, url, tv);
}
/// libsmbclient calls the splice callback after each chunk without checking it for NULL.
static inline int favfs_smb_splice_goes_on(off_t copied, void *priv) { (void)copied; (void)priv; return 1; }

/// Copies `count` bytes from `src` to `dst` at the server (SMB2 copy-chunk): no byte of them
/// comes to this machine. Returns the bytes copied, or -1.
static inline off_t favfs_smb_splice(SMBCCTX *c, SMBCFILE *src, SMBCFILE *dst, off_t count) {
    return smbc_getFunctionSplice(c)(c, src, dst, count, favfs_smb_splice_goes_on, NULL);
}
static inline int favfs_smb_statvfs(SMBCCTX *c, const char *url, struct statvfs *st) { return smbc_getFunctionStatVFS(c)(c, (char *)url, st); }

#endif
