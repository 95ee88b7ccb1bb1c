#define _GNU_SOURCE
#include "relay_system.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
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
