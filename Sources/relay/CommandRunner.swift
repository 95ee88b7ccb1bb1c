import ArgumentParser
import LanguageModels
import RelayEngine
import WorkspaceCore
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
        } catch let error as WorkspaceError {
            Terminal.error(error.message)
            return error.isUsageError ? 2 : 1
        } catch let error as WatcherError {
            Terminal.error(error.message)
            return 1
        } catch let error as LanguageModelError {
            Terminal.error(error.message)
            return error.isConfigurationError ? 2 : 1
        } catch let error as RelayError {
            Terminal.error(error.message)
            return error.isUsageError ? 2 : 1
        } catch let error as CommandFailure {
            Terminal.error(error.message)
            return error.status
        } catch {
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
