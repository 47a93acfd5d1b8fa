/* linerate guest agent: one request at a time on the virtio-serial port named linerate.agent.
 *
 *   host -> guest  "LRQ <id> <bytes> <timeout_s>\n" + <bytes> of shell script, run by dash
 *                  "LRF <id> <bytes> <timeout_s>\n" + <bytes> of paths, one a line: read them here
 *   guest -> host  "LRR <id> <status> <stdout bytes> <stderr bytes>\n" + stdout + stderr
 *
 * For LRF, stdout holds one record a path, "<errno> <length>\n" + <length> bytes of the file
 * (errno 0 when it was read): telemetry files (/proc/stat, /proc/interrupts ...) are read with
 * read(2) in this process, no fork. Under TCG a fork+exec costs the guest ~10 ms of a vCPU that a
 * saturated router needs for forwarding; the shell agent this replaces forked 6 times a request.
 *
 * LRQ scripts run in dash by path (busybox would run its own applets before iproute2's; a second
 * argument names another shell, for tests on the host) through
 * posix_spawn (vfork semantics: no page-table copy), in their own process group so that a timeout
 * kills the whole group; status 124 means the timeout struck, as with timeout(1).
 * While no host is connected, reads return end-of-file: wait and read again.
 * Built statically by linerate/vm/guest_build.py with the host's gcc; no other dependency.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUEST (16 * 1024 * 1024)
#define MAX_FILE (4 * 1024 * 1024)  /* per file read and per command stream: what the host accepts */

extern char **environ;
static int port = -1;
static const char *shell = "/usr/sbin/dash";
static char request_path[512], stdout_path[512], stderr_path[512];  /* in $LINERATE_AGENT_DIR, else /tmp */
static char inbuf[65536];
static size_t inlen;

struct buf { char *data; size_t len, cap; };

static void put(struct buf *b, const void *data, size_t len) {
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) _exit(70);
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

static void write_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  /* the host went away: the next read sees it */
        data += n;
        len -= (size_t)n;
    }
}

/* Fill inbuf; 0 on end-of-file (no host connected). */
static int fill(void) {
    for (;;) {
        ssize_t n = read(port, inbuf + inlen, sizeof inbuf - inlen);
        if (n > 0) { inlen += (size_t)n; return 1; }
        if (n < 0 && errno == EINTR) continue;
        return 0;
    }
}

static int read_line(char *line, size_t size) {
    for (;;) {
        char *nl = memchr(inbuf, '\n', inlen);
        if (nl) {
            size_t len = (size_t)(nl - inbuf);
            if (len >= size) len = size - 1;
            memcpy(line, inbuf, len);
            line[len] = 0;
            inlen -= (size_t)(nl - inbuf) + 1;
            memmove(inbuf, nl + 1, inlen);
            return 1;
        }
        if (inlen == sizeof inbuf) inlen = 0;  /* an over-long header line: drop it */
        if (!fill()) return 0;
    }
}

static int read_body(struct buf *body, size_t size) {
    while (body->len < size) {
        if (inlen == 0 && !fill()) return 0;
        size_t take = size - body->len < inlen ? size - body->len : inlen;
        put(body, inbuf, take);
        inlen -= take;
        memmove(inbuf, inbuf + take, inlen);
    }
    return 1;
}

/* Only regular files (which /proc and /sys entries are), opened without blocking: a FIFO or a
 * character device (/dev/kmsg) would wedge the agent, which has no timeout around a read. */
/* Consume `size` bytes of a body that will not be used; 0 on end-of-file. */
static int discard(size_t size) {
    while (size > 0) {
        if (inlen == 0 && !fill()) return 0;
        size_t take = size < inlen ? size : inlen;
        inlen -= take;
        size -= take;
        memmove(inbuf, inbuf + take, inlen);
    }
    return 1;
}

static void read_file(const char *path, struct buf *out) {
    struct buf content = {0};
    char head[64];
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err = 0;
    if (fd < 0) {
        err = errno;
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        err = EINVAL;
        close(fd);
    } else {
        char chunk[16384];
        for (;;) {
            ssize_t n = read(fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) { err = errno; break; }
            if (n == 0) break;
            if (content.len + (size_t)n > MAX_FILE) { err = EFBIG; break; }
            put(&content, chunk, (size_t)n);
        }
        close(fd);
    }
    int len = snprintf(head, sizeof head, "%d %zu\n", err, err ? 0 : content.len);
    put(out, head, (size_t)len);
    if (!err && content.len) put(out, content.data, content.len);
    free(content.data);
}

/* A command's output file, at most MAX_FILE bytes of it; 1 when it was longer (cut). */
static int slurp(const char *path, struct buf *out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char chunk[16384];
    ssize_t n;
    int cut = 0;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) {
        if (out->len + (size_t)n > MAX_FILE) { cut = 1; break; }
        put(out, chunk, (size_t)n);
    }
    close(fd);
    return cut;
}

/* Run the script with dash; its status, or 124 when the timeout struck. SIGCHLD is blocked. */
static int run_script(const struct buf *script, long timeout_s, struct buf *out, struct buf *err) {
    int fd = open(request_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return 126;
    write_all(fd, script->data, script->len);
    close(fd);
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t none;
    sigemptyset(&none);
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_USEVFORK);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    char *argv[] = {(char *)shell, request_path, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return 127;
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    struct timespec deadline, now, left;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_s;
    int status = 0, timed_out = 0;
    for (;;) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        left.tv_sec = deadline.tv_sec - now.tv_sec;
        left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
        if (left.tv_nsec < 0) { left.tv_nsec += 1000000000L; left.tv_sec -= 1; }
        if (left.tv_sec < 0) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            timed_out = 1;
            break;
        }
        sigtimedwait(&chld, NULL, &left);
    }
    int cut = slurp(stdout_path, out) | slurp(stderr_path, err);
    unlink(stdout_path);
    unlink(stderr_path);
    if (timed_out) return 124;
    if (cut) return 125;  /* output over MAX_FILE: the host refuses it rather than use part of it */
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: agent PORT [SHELL]\n");
        return 2;
    }
    if (argc == 3) shell = argv[2];
    const char *dir = getenv("LINERATE_AGENT_DIR");
    if (!dir || !*dir) dir = "/tmp";
    snprintf(request_path, sizeof request_path, "%s/request", dir);
    snprintf(stdout_path, sizeof stdout_path, "%s/stdout", dir);
    snprintf(stderr_path, sizeof stderr_path, "%s/stderr", dir);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    port = open(argv[1], O_RDWR | O_CLOEXEC);
    if (port < 0) {
        perror(argv[1]);
        return 1;
    }
    char line[256], tag[8];
    for (;;) {
        if (!read_line(line, sizeof line)) {
            usleep(100000);
            continue;
        }
        unsigned long id, size;
        long limit;
        if (sscanf(line, "%7s %lu %lu %ld", tag, &id, &size, &limit) != 4) continue;
        int is_query = strcmp(tag, "LRQ") == 0, is_files = strcmp(tag, "LRF") == 0;
        struct buf body = {0}, out = {0}, err = {0};
        if ((!is_query && !is_files) || size > MAX_REQUEST) {
            /* never run or parse a body it will not serve; answer an oversized request at once */
            if (!discard(size)) continue;
            if (is_query || is_files) {
                char head[128];
                const char *why = "linerate agent: request larger than 16 MiB refused\n";
                int len = snprintf(head, sizeof head, "LRR %lu 126 0 %zu\n", id, strlen(why));
                write_all(port, head, (size_t)len);
                write_all(port, why, strlen(why));
            }
            continue;
        }
        if (!read_body(&body, size)) { free(body.data); continue; }
        int status = 0;
        if (is_query) {
            status = run_script(&body, limit > 0 ? limit : 1, &out, &err);
        } else {
            put(&body, "", 1);
            for (char *path = body.data, *next; path && *path; path = next) {
                next = strchr(path, '\n');
                if (next) *next++ = 0;
                if (*path) read_file(path, &out);
            }
        }
        char head[128];
        int len = snprintf(head, sizeof head, "LRR %lu %d %zu %zu\n", id, status, out.len, err.len);
        struct buf reply = {0};
        put(&reply, head, (size_t)len);
        if (out.len) put(&reply, out.data, out.len);
        if (err.len) put(&reply, err.data, err.len);
        write_all(port, reply.data, reply.len);
        free(body.data); free(out.data); free(err.data); free(reply.data);
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }  /* as PID 1: orphans of a killed script's group are ours to reap */
    }
}
