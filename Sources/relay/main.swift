// The `relay` command line: parse, run, and map every error to a clear message and an exit
// status (0 ok, 1 failed, 2 bad usage or bad configuration).
import Glibc

// A filter command (`relay fs update`) may close its input early, and a pager may close our
// output: both should be an EPIPE we handle, not a silent death by SIGPIPE.
signal(SIGPIPE, SIG_IGN)
prepareFileDescriptors()
let arguments = Array(CommandLine.arguments.dropFirst())
if let status = CommandRunner.runSyncServeDirectly(arguments) { exit(status) }
exit(await CommandRunner.run(arguments))

/// Raises the soft limit of open files to the hard one (at most 65,536), and sizes the file
/// descriptor table for 2,048 descriptors now, while the process has a single thread.
///
/// A write batch holds one lock file open per staged path (up to 1,000, with the index, pipes
/// and temporaries on top: past a default soft limit of 1,024). And the kernel grows the table
/// of a process with several threads by waiting for an RCU grace period each time it doubles
/// (64 → 128 → … → 2,048): measured here, ~10 ms a step, 22 ms of a 150-file change set's
/// receiving side. Grown before any thread exists, it costs nothing (and 16 KiB).
func prepareFileDescriptors() {
    var limit = rlimit()
    if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = min(limit.rlim_max, 65_536)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    let highest = CInt(min(limit.rlim_cur, 2_048)) - 1
    let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
    guard null >= 0 else { return }
    // The lowest free descriptor from `highest` up (unlike dup2, never one already open).
    if highest > null {
        let spare = fcntl(null, F_DUPFD_CLOEXEC, highest)
        if spare >= 0 { close(spare) }
    }
    close(null)
}
