// Races an open truncating an existing file against a rename of it (IntegrityEndToEndTests):
// for each i, one thread opens DIR/f<i> with O_TRUNC and writes "new" while another renames
// it to DIR/g<i>, both let go at once. Prints "<i> written" when the open, the write and the
// close succeeded, "<i> absent" when the open found no f<i> (the rename came first). Either
// way g<i> must end up holding what the winner says: "new" after a write, else the old content.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static const char *dir;
static int count;
static pthread_barrier_t start;
static void *opener(void *arg) {
    (void)arg;
    char p[4096];
    for (int i = 0; i < count; i++) {
        snprintf(p, sizeof p, "%s/f%d", dir, i);
        pthread_barrier_wait(&start);
        int fd = open(p, O_WRONLY | O_TRUNC);
        if (fd < 0) { printf("%d %s\n", i, errno == ENOENT ? "absent" : "failed"); continue; }
        int ok = write(fd, "new", 3) == 3;
        ok = close(fd) == 0 && ok;
        printf("%d %s\n", i, ok ? "written" : "failed");
    }
    return 0;
}
static void *renamer(void *arg) {
    (void)arg;
    char p[4096], q[4096];
    for (int i = 0; i < count; i++) {
        snprintf(p, sizeof p, "%s/f%d", dir, i);
        snprintf(q, sizeof q, "%s/g%d", dir, i);
        pthread_barrier_wait(&start);
        usleep((useconds_t)(rand() % 300));
        if (rename(p, q) != 0) { perror("rename"); exit(1); }
    }
    return 0;
}
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: open_rename_race DIR COUNT\n"); return 2; }
    dir = argv[1];
    count = atoi(argv[2]);
    pthread_barrier_init(&start, 0, 2);
    pthread_t a, b;
    pthread_create(&a, 0, opener, 0);
    pthread_create(&b, 0, renamer, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
