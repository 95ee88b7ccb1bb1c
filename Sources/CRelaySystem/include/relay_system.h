// The Linux calls Swift's Glibc module does not expose (they sit behind _GNU_SOURCE or are
// reached only through the variadic syscall()). Nothing else lives here; WorkspaceCore's
// Internals/Syscalls.swift is the only caller, and WorkspaceSync's PeerProcess of relay_spawn.
#ifndef RELAY_SYSTEM_H
#define RELAY_SYSTEM_H

#include <stdint.h>
#include <sys/types.h>

/// renameat2(2). flags: RELAY_RENAME_NOREPLACE or RELAY_RENAME_EXCHANGE. Returns 0 or -1 with errno.
int relay_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

#define RELAY_RENAME_NOREPLACE 1u
#define RELAY_RENAME_EXCHANGE 2u

/// An exclusive (write) open-file-description lock over the whole file: fcntl(F_OFD_SETLK)
/// or, when wait != 0, fcntl(F_OFD_SETLKW). Returns 0 or -1 with errno (EAGAIN when held).
int relay_ofd_lock_exclusive(int fd, int wait);

/// Releases an OFD lock taken by relay_ofd_lock_exclusive: fcntl(F_OFD_SETLK, F_UNLCK).
int relay_ofd_unlock(int fd);

/// fcntl(F_OFD_GETLK): 1 if another open file description holds a conflicting lock, 0 if not,
/// -1 with errno on failure.
int relay_ofd_is_locked(int fd);

/// syncfs(2): flushes the whole file system that holds fd. Returns 0 or -1 with errno.
int relay_syncfs(int fd);

/// sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE): starts writing the file's dirty pages
/// and returns without waiting. Returns 0 or -1 with errno.
int relay_start_writeback(int fd);

/// fsetxattr(2) on an open file, creating or replacing the attribute. Returns 0 or -1 with
/// errno (ENOTSUP/EOPNOTSUPP where the file system keeps no user attributes).
int relay_fsetxattr(int fd, const char *name, const void *value, size_t size);

/// lgetxattr(2) (the link itself, not its target). Returns the value's length or -1 with errno
/// (ENODATA when the file has no such attribute).
ssize_t relay_lgetxattr(const char *path, const char *name, void *value, size_t size);

/// Starts `file` (looked up on PATH, posix_spawnp) with `argv` and the environment, its
/// standard input, output and error on three new pipes, every other descriptor closed in it,
/// default signal handling, an empty signal mask, in a process group of its own. On success
/// returns 0 and sets *pid and ends[0] (its input, to write), ends[1] (its output, to read),
/// ends[2] (its error, to read), all O_CLOEXEC; else returns an errno value.
int relay_spawn(const char *file, char *const argv[], pid_t *pid, int ends[3]);

/// `relay_spawn` with choices: RELAY_SPAWN_INHERIT_INPUT, _OUTPUT, _ERROR give the child this
/// process's own standard input, output or error instead of a pipe (its end is then -1), and
/// RELAY_SPAWN_SAME_GROUP keeps it in this process group (a terminal's Ctrl-C reaches both).
/// `envp` (NULL: this process's environment) is the child's environment, `directory` (NULL:
/// this one's) its working folder, and `output_fd`, when not -1, its standard output and
/// error both (a log file; no pipes for them then).
int relay_spawn_with(const char *file, char *const argv[], char *const envp[], const char *directory,
                     int output_fd, pid_t *pid, int ends[3], int flags);

#define RELAY_SPAWN_INHERIT_INPUT 1
#define RELAY_SPAWN_INHERIT_OUTPUT 2
#define RELAY_SPAWN_INHERIT_ERROR 4
#define RELAY_SPAWN_SAME_GROUP 8

#endif
