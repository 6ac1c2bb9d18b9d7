// Interrupts FUSE requests (IntegrityEndToEndTests): each worker creates, writes, fsyncs,
// renames, reads and removes files and folders in a mount while an interval timer sends it
// SIGALRM (a handler, no SA_RESTART) every few hundred microseconds, so the kernel sends
// FUSE_INTERRUPT for requests in flight, some before the daemon registered for them. Errors
// are expected and ignored: what is checked is the daemon afterwards.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
#include <errno.h>
static long eintr;
static void on_alarm(int s) { (void)s; }
int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: sigstorm DIR WORKERS SECONDS [USEC]\n"); return 2; }
    int workers = atoi(argv[2]), seconds = atoi(argv[3]);
    long usec = argc > 4 ? atol(argv[4]) : 300;
    for (int w = 0; w < workers; w++) {
        if (fork() == 0) {
            struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = on_alarm; sigaction(SIGALRM, &sa, NULL);
            struct itimerval it = { { 0, usec }, { 0, usec } }; setitimer(ITIMER_REAL, &it, NULL);
            time_t end = time(NULL) + seconds; char d[4096], f[4096], g[4096]; char buf[8192]; memset(buf, 'x', sizeof buf);
            long i; for (i = 0; time(NULL) < end; i++) {
                snprintf(d, sizeof d, "%s/w%d-%ld", argv[1], w, i % 7);
                snprintf(f, sizeof f, "%s/f%ld", d, i % 5);
                snprintf(g, sizeof g, "%s/g%ld", d, i % 5);
                if (mkdir(d, 0755) < 0 && errno == EINTR) eintr++;
                int fd = open(f, O_CREAT | O_WRONLY | O_TRUNC, 0644); if (fd < 0 && errno == EINTR) eintr++;
                if (fd >= 0) { write(fd, buf, (size_t)(i % 8192)); fsync(fd); close(fd); }
                struct stat st; stat(f, &st); chmod(f, 0642);
                rename(f, g);
                fd = open(g, O_RDONLY); if (fd >= 0) { read(fd, buf, sizeof buf); close(fd); }
                if (unlink(g) < 0 && errno == EINTR) eintr++; unlink(f); if (rmdir(d) < 0 && errno == EINTR) eintr++;
            }
            fprintf(stderr, "worker %d: %ld ops, %ld EINTR\n", w, i, eintr); _exit(0);
        }
    }
    int status, bad = 0; while (wait(&status) > 0) if (!WIFEXITED(status)) bad++;
    return bad;
}
