import ArgumentParser
import LanguageModels
import RelayEngine
import RelayServer
import WorkspaceCore
import WorkspaceSync
import WorkspaceWatcher

/// Runs the root command and turns errors into exit statuses the design promises:
/// 0 ok, 1 the operation failed, 2 bad usage or bad configuration.
enum CommandRunner {
    static func run(_ arguments: [String]) async -> Int32 {
        do {
            var command = try Relay.parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return 0
        } catch {
            return status(for: error)
        }
    }

    /// `relay sync-serve --stdio [--start] DIR`, exactly as `relay sync` asks for it over ssh, run without
    /// the argument parser: ~2 ms of the server's start (the parser's dynamic casts scan every
    /// protocol conformance of this large binary once), and the server's start is on the path
    /// every sync over ssh waits on. Any other form goes through `run` (help, errors, options).
    static func runSyncServeDirectly(_ arguments: [String]) -> Int32? {
        let start = arguments.count == 4 && arguments[2] == "--start"
        guard arguments.count == (start ? 4 : 3), arguments[0] == "sync-serve", arguments[1] == "--stdio",
              !arguments[arguments.count - 1].hasPrefix("-") else { return nil }
        do {
            try SyncServeCommand.serve(arguments[arguments.count - 1], start: start)
            return 0
        } catch {
            return status(for: error)
        }
    }

    /// Says what went wrong, and the exit status for it.
    static func status(for error: Error) -> Int32 {
        switch error {
        case let error as WorkspaceError:
            Terminal.error(error.message)
            return error.isUsageError ? 2 : 1
        case let error as WatcherError:
            Terminal.error(error.message)
            return 1
        case let error as LanguageModelError:
            Terminal.error(error.message)
            return error.isConfigurationError ? 2 : 1
        case let error as RelayError:
            Terminal.error(error.message)
            return error.isUsageError ? 2 : 1
        case let error as SyncError:
            Terminal.error(error.message)
            return error.isUsageError ? 2 : 1
        case let error as APIError:
            // `relay serve` / `relay watch --http` could not start: the token, the address.
            Terminal.error(error.message)
            return error.code == .configuration ? 2 : 1
        case let error as CommandFailure:
            Terminal.error(error.message)
            return error.status
        default:
            let code = Relay.exitCode(for: error)
            let message = Relay.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                return 0
            }
            if !message.isEmpty { Terminal.standardError(message + "\n") }
            // ArgumentParser's usage errors are 64 (EX_USAGE); Relay promises 2.
            return code == .validationFailure ? 2 : code.rawValue
        }
    }
}

/// A failure a command reports itself, with the exit status to use.
struct CommandFailure: Error {
    var message: String
    var status: Int32 = 1
}
