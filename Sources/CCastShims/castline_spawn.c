// castline_spawn_tethered: a child that cannot outlive castline (see castline_shims.h).
#define _GNU_SOURCE
#include "castline_shims.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;

struct spawn_request {
    const char *path;
    char *const *argv;
    int stdout_fd;
    int stderr_fd;
    pid_t result;
    int done;
};

static pthread_once_t spawner_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t spawner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawner_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t spawner_done = PTHREAD_COND_INITIALIZER;
static struct spawn_request *spawner_pending = NULL;
static int spawner_ready = 0;

static pid_t fork_tethered(const struct spawn_request *r) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid > 0) {
        setpgid(pid, pid); /* also in the child: whichever runs first */
        return pid;
    }
    /* Child: async-signal-safe calls only. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the parent died before prctl */
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    for (int s = 1; s < 32; s++) {
        if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
    }
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd < 0) _exit(127);
    dup2(null_fd, 0);
    dup2(r->stdout_fd >= 0 ? r->stdout_fd : null_fd, 1);
    dup2(r->stderr_fd >= 0 ? r->stderr_fd : null_fd, 2);
    if (close_range(3, ~0U, 0) != 0) {
        int max_fd = (int)sysconf(_SC_OPEN_MAX);
        if (max_fd < 0 || max_fd > 65536) max_fd = 65536;
        for (int fd = 3; fd < max_fd; fd++) close(fd);
    }
    execve(r->path, r->argv, environ);
    _exit(127);
}

static void *spawner_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&spawner_lock);
    spawner_ready = 1;
    for (;;) {
        while (spawner_pending == NULL) pthread_cond_wait(&spawner_wake, &spawner_lock);
        struct spawn_request *r = spawner_pending;
        spawner_pending = NULL;
        r->result = fork_tethered(r);
        r->done = 1;
        pthread_cond_broadcast(&spawner_done);
    }
    return NULL;
}

static void start_spawner(void) {
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attributes, spawner_main, NULL) != 0) spawner_ready = -1;
    pthread_attr_destroy(&attributes);
}

pid_t castline_spawn_tethered(const char *path, char *const argv[], int stdout_fd, int stderr_fd) {
    pthread_once(&spawner_once, start_spawner);
    if (spawner_ready < 0) return -EAGAIN;
    struct spawn_request request = {path, argv, stdout_fd, stderr_fd, 0, 0};
    pthread_mutex_lock(&spawner_lock);
    while (spawner_pending != NULL) pthread_cond_wait(&spawner_done, &spawner_lock);
    spawner_pending = &request;
    pthread_cond_broadcast(&spawner_wake);
    while (!request.done) pthread_cond_wait(&spawner_done, &spawner_lock);
    pthread_mutex_unlock(&spawner_lock);
    return request.result;
}
