// The `relay` command line: parse, run, and map every error to a clear message and an exit
// status (0 ok, 1 failed, 2 bad usage or bad configuration).
import Glibc

exit(await CommandRunner.run(Array(CommandLine.arguments.dropFirst())))
