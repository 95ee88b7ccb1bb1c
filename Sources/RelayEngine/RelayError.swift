import LanguageModels
import WorkspaceCore

/// The errors of the relay engine, each with a message that names the run, the file or the
/// agent concerned and says what to do.
public struct RelayError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// A relay, agent or run named on the command line or in a trigger does not exist.
        case notFound
        /// Bad usage: e.g. `--agent` with a name not in the roster.
        case usage
        /// A run's journal or manifest cannot be read.
        case corruptRun
        /// Another process is running this run.
        case busy
        /// Replay produced different files than the recording.
        case replayMismatch
        case io
        /// A plan relay's limits (issue 19), enforced by the engine whatever the model asks:
        /// a worker tried to start workers (or ask another agent to run).
        case workerCannotSpawn
        /// The planner gave more subtasks than the relay's `maxWorkers`.
        case tooManySubtasks
        /// The turn would make more model calls than the relay's `maxCalls`.
        case modelCallCap
        /// A prompt cannot fit its agent's token budget even with everything cuttable cut.
        case overBudget
        /// An agent's model failed: no server at its URL, a refusal, a broken reply, or a bad
        /// `"model"` section. The message names the agent, the model and its URL; the
        /// `LanguageModelError` is the cause (``modelCause``). The run stays resumable.
        case model
        /// A triggered file holds other bytes than the ones that settled: its run stands aside
        /// for the newer content's own trigger (new bytes never run under the old key).
        case superseded
    }

    public var code: Code
    public var message: String
    /// The file concerned, when there is one (a run's journal, its manifest).
    public var path: String?
    /// The failure underneath, when there is one: a `WorkspaceError` (the system call that
    /// failed, with its errno), a `LanguageModelError` (the model server, its URL), or another
    /// module's own error.
    public var cause: (any Error)?

    /// The cause when it is the workspace's (`cause as? WorkspaceError`).
    public var workspaceCause: WorkspaceError? { cause as? WorkspaceError }

    public init(_ code: Code, _ message: String, path: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause
    }

    /// The model's error when the model failed (`cause as? LanguageModelError`): what the
    /// daemon looks at to decide whether to wait for the server.
    public var modelCause: LanguageModelError? { cause as? LanguageModelError }

    /// An agent's model failed while it was being asked (``Code/model``), in one message that
    /// names the agent and the model (its provider, name and URL) before the model's own words.
    ///
    /// For example: "📋 Paige got no answer from default (openai-compatible) at
    /// http://127.0.0.1:9/v1: no model server at http://127.0.0.1:9/v1 (connection refused) — …"
    public static func model(_ error: LanguageModelError, agent: String, model: String) -> RelayError {
        RelayError(.model, "\(agent) got no answer from \(model): \(error.message)", cause: error)
    }

    /// Equal when code, message and path are (the cause is how it came about, not what it is).
    public static func == (lhs: RelayError, rhs: RelayError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.path == rhs.path
    }

    public var description: String { message }

    /// Exit status 2 on the command line: bad usage, or a model whose configuration is wrong.
    public var isUsageError: Bool { code == .usage || code == .notFound || modelCause?.isConfigurationError == true }
}
