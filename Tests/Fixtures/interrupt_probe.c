// LD_PRELOAD probe for the FUSE daemon (IntegrityEndToEndTests): counts replies sent from
// inside fuse_req_interrupt_func. libfuse 3.14 calls the interrupt callback there for a request
// interrupted before the call, and unlocks req->lock after it returns: a reply in the callback
// frees the request first, so that unlock writes into freed memory. Prints its counts to
// stderr (the daemon's log) at exit.
#define _GNU_SOURCE
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdatomic.h>
static atomic_long early, total, unsafe_replies;
static __thread int inside;
static void report(void) __attribute__((destructor));
static void report(void) { fprintf(stderr, "interrupt-probe: registrations %ld, on an already interrupted request %ld, replies sent inside the registration %ld\n", total, early, unsafe_replies); }
void fuse_req_interrupt_func(fuse_req_t req, fuse_interrupt_func_t func, void *data) {
    static void (*real)(fuse_req_t, fuse_interrupt_func_t, void *);
    if (!real) real = dlsym(RTLD_NEXT, "fuse_req_interrupt_func");
    total++;
    if (func && fuse_req_interrupted(req)) early++;
    inside = 1;
    real(req, func, data);
    inside = 0;
}
int fuse_reply_err(fuse_req_t req, int err) {
    static int (*real)(fuse_req_t, int);
    if (!real) real = dlsym(RTLD_NEXT, "fuse_reply_err");
    if (inside) unsafe_replies++;
    return real(req, err);
}
