#define _GNU_SOURCE
#include "relay_system.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

int relay_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    unsigned int kflags = 0;
    if (flags & RELAY_RENAME_NOREPLACE) kflags |= RENAME_NOREPLACE;
    if (flags & RELAY_RENAME_EXCHANGE) kflags |= RENAME_EXCHANGE;
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, kflags);
}

static void whole_file(struct flock *fl, short type) {
    memset(fl, 0, sizeof *fl);
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = 0;
    fl->l_len = 0;
    fl->l_pid = 0; /* must be 0 for OFD locks */
}

int relay_ofd_lock_exclusive(int fd, int wait) {
    struct flock fl;
    whole_file(&fl, F_WRLCK);
    return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
}

int relay_ofd_unlock(int fd) {
    struct flock fl;
    whole_file(&fl, F_UNLCK);
    return fcntl(fd, F_OFD_SETLK, &fl);
}

int relay_ofd_is_locked(int fd) {
    struct flock fl;
    whole_file(&fl, F_WRLCK);
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return -1;
    return fl.l_type == F_UNLCK ? 0 : 1;
}

int relay_syncfs(int fd) {
    return syncfs(fd);
}

int relay_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

extern char **environ;

/* fd itself when above 2, else a copy above 2 (the original closed): moved onto 0, 1 or 2 in
   the child, a pipe end must never be the descriptor it replaces. */
static int above_standard(int fd) {
    if (fd > 2) return fd;
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return copy;
}

int relay_spawn(const char *file, char *const argv[], pid_t *pid, int ends[3]) {
    return relay_spawn_with(file, argv, NULL, NULL, -1, pid, ends, 0);
}

int relay_spawn_with(const char *file, char *const argv[], char *const envp[], const char *directory,
                     int output_fd, pid_t *pid, int ends[3], int flags) {
    int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    int result = 0;
    for (int i = 0; i < 3; i++) {
        if (flags & (1 << i)) continue;  /* RELAY_SPAWN_INHERIT_INPUT, _OUTPUT, _ERROR */
        if (i > 0 && output_fd >= 0) continue;  /* output and error go to output_fd */
        if (pipe2(pipes[i], O_CLOEXEC) != 0) { result = errno; goto done; }
        pipes[i][0] = above_standard(pipes[i][0]);
        pipes[i][1] = above_standard(pipes[i][1]);
        if (pipes[i][0] < 0 || pipes[i][1] < 0) { result = errno; goto done; }
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    if (pipes[0][0] >= 0) posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0);
    if (pipes[1][1] >= 0) posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1);
    if (pipes[2][1] >= 0) posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2);
    if (output_fd >= 0) {
        posix_spawn_file_actions_adddup2(&actions, output_fd, 1);
        posix_spawn_file_actions_adddup2(&actions, output_fd, 2);
    }
    if (directory != NULL) posix_spawn_file_actions_addchdir_np(&actions, directory);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    short spawnFlags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (!(flags & RELAY_SPAWN_SAME_GROUP)) {
        posix_spawnattr_setpgroup(&attributes, 0);
        spawnFlags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&attributes, spawnFlags);
    result = posix_spawnp(pid, file, &actions, &attributes, argv, envp != NULL ? envp : environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (result == 0) {
        ends[0] = pipes[0][1];
        ends[1] = pipes[1][0];
        ends[2] = pipes[2][0];
        pipes[0][1] = pipes[1][0] = pipes[2][0] = -1;
    }
done:
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 2; j++) if (pipes[i][j] >= 0) close(pipes[i][j]);
    }
    return result;
}

int relay_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

ssize_t relay_lgetxattr(const char *path, const char *name, void *value, size_t size) {
    return lgetxattr(path, name, value, size);
}
