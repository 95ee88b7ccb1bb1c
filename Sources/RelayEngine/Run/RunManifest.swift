import Foundation

/// Everything a run starts from, written once to `.relay/runs/<id>/run.json` before the first
/// model call: the request, the roster and `context.md` as they were. Resume and replay start
/// from it, so a roster or context edited afterwards changes neither.
public struct RunManifest: Sendable, Codable, Equatable {
    public enum Source: String, Sendable, Codable {
        /// `relay ask`.
        case ask
        /// A file dropped in a trigger folder (`file` input).
        case file
        /// A message written into a chat file (`chat` input).
        case chat
    }

    public var format = 1
    public var id: String
    public var relay: String
    /// When the run was created, UTC, ISO 8601 with milliseconds.
    public var created: String
    /// The local date and time at creation, for `{date}` and `{time}` in paths.
    public var localDate: String
    public var localTime: String
    public var source: Source
    /// The file that started the run and its SHA-256, for triggered runs.
    public var triggerPath: String?
    public var triggerHash: String?
    /// The request every agent gets under `[User Request]:`.
    public var request: String
    /// What the transcript shows as the person's message when it is not the request itself
    /// (a dropped file: its name and how it was read, not its whole text).
    public var shownRequest: String?
    /// The conversation: its chat file (`Chats/NAME.md`) gets the answers, and the transcript
    /// (`Chats/NAME.json`) every message.
    public var conversation: String
    public var chatFile: String
    /// `{name}` in declared output paths.
    public var name: String
    /// The roster as it was, in running order.
    public var roster: [AgentDefinition]
    public var rosterFile: String
    /// With `relay ask --agent`: the one agent asked.
    public var singleAgent: String?
    /// `context.md` as it was at the start ("" when there is none).
    public var context: String
    /// The default token budget per agent.
    public var contextTokens: Int
    /// The model that answers (its description), for the transcript.
    public var model: String
    /// What happened to the input before the run (converted from PDF, cut, skipped).
    public var inputNote: String?
    /// Set when the input could not be turned into text: the run makes no model calls.
    public var skipped: Bool = false
    /// The workspace's files and folders at the start (when there are few enough): the tools'
    /// path arguments are limited to them, so a model that writes JSON under a grammar can only
    /// name paths that exist. Nil when there are more than ``RunManifest/pathLimit``.
    public var files: [String]?
    public var folders: [String]?
    /// For a dropped file: its text (converted, cut at the input limit) — what agents that
    /// extract sentences read, in window-sized chunks.
    public var document: String?
    /// The workspace lines retrieved for the request at the start (best first), for agents with
    /// `retrieve`: kept here so resume and replay give the same prompts.
    public var retrieved: [RetrievedLine]?
    /// What the engine made of a question (its kind, the value or days it asks for), decided
    /// once from its grammar; nil for a dropped file, and for runs recorded before kinds were.
    public var analysis: RequestAnalysis?
    /// The chat's previous exchange (the person's last message and the answer they got), so a
    /// follow-up question means something; cut to a budget.
    public var previousExchange: Exchange?
    /// The relay's shape (nil: `sequence`, as runs recorded before modes were).
    public var mode: RelayMode?
    /// For `route`: the settings, and each agent's earlier exchanges in this chat (oldest
    /// first, at most `maxMessages / 2` pairs) — read once at the start, so resume and replay
    /// give the same prompts.
    public var routing: RouteSettings?
    public var histories: [String: [Exchange]]?
    /// For `plan`: the settings, with the roles' agent ids filled in.
    public var planning: PlanSettings?
    /// The agents the message @mentions (ids, roster order): they alone answer, in sequence.
    public var mentioned: [String]?
    /// Set when the message mentions a name no agent has: the chat gets this, no agent is asked.
    public var mentionNotice: String?

    /// A person's message and the answer the relay gave.
    public struct Exchange: Sendable, Codable, Equatable {
        public var message: String
        public var answer: String

        public init(message: String, answer: String) {
            self.message = message
            self.answer = answer
        }
    }

    public static let pathLimit = 64

    /// "relay|path|hash": the trigger this run answers (how an older Relay's `by-trigger/`
    /// records were keyed; the watcher's trigger row now names the run itself).
    public var triggerKey: String? {
        guard let triggerPath, let triggerHash else { return nil }
        return "\(relay)|\(triggerPath)|\(triggerHash)"
    }

    /// The request without the document appended to it ("A file arrived: …"); the request
    /// itself when there is no document.
    public var requestLead: String {
        guard document != nil, let marker = request.range(of: "\n\n--- ") else { return request }
        return String(request[..<marker.lowerBound])
    }

    /// The agents that run: the roster, or the one agent asked.
    public var runningAgents: [AgentDefinition] {
        if let singleAgent { return roster.filter { $0.id == singleAgent } }
        if let mentioned { return roster.filter { mentioned.contains($0.id) } }
        return roster
    }

    /// The shape this run takes: `--agent`, or a mention outside a routed relay, makes any relay
    /// a sequence of the agents named (in a routed relay a mention is its first rule).
    public var shape: RelayMode {
        let mode = self.mode ?? .sequence
        if singleAgent != nil || mentionNotice != nil { return .sequence }
        if mentioned != nil, mode != .route { return .sequence }
        return mode
    }

    /// The transcript next to the chat file: `Chats/NAME.json`.
    public var transcriptFile: String { Conversation.transcriptPath(forChat: chatFile) }

    var placeholderValues: [String: String] {
        ["date": localDate, "time": localTime, "name": name, "relay": relay, "run": id]
    }
}
