// The `relay` command line: parse, run, and map every error to a clear message and an exit
// status (0 ok, 1 failed, 2 bad usage or bad configuration).
import Glibc

// A filter command (`relay fs update`) may close its input early, and a pager may close our
// output: both should be an EPIPE we handle, not a silent death by SIGPIPE.
signal(SIGPIPE, SIG_IGN)
exit(await CommandRunner.run(Array(CommandLine.arguments.dropFirst())))
