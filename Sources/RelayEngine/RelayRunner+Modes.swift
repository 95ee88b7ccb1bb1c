import Foundation
import LanguageModels
import WorkspaceCore

/// What a run's manifest records of its relay's shape (issue 19): the mode and its settings,
/// the message's @mentions, and — for a routed relay — each agent's earlier exchanges in the
/// chat. All of it is fixed at prepare time, so a resumed or replayed run sees the same.
extension RelayRunner {
    /// The @mentions of a message among a relay's agents — the one function the chat files,
    /// `relay ask` and the HTTP API share.
    ///
    /// For example:
    /// ```swift
    /// let mentions = try engine.mentions(in: "@Wren a haiku, please")
    /// mentions.agents.map(\.id)   // ["writer"]
    /// ```
    /// - throws: `RelayError` `.notFound` for an unknown relay, `WorkspaceError` for an invalid roster.
    public func mentions(in message: String, relay relayName: String? = nil) throws -> Mentions {
        let configuration = try RelayConfiguration.load(from: workspace)
        let relay = try Self.relay(relayName, in: configuration)
        return Mentions.resolve(message, roster: try configuration.roster(for: relay, in: workspace).agents)
    }

    /// Fills in the manifest's mode, mentions and histories.
    /// - parameter message: the person's message when mentions count (not for `--agent` or a dropped file).
    func applyShape(of relay: RelayDefinition, roster: Roster, message: String?, transcript: String?, to manifest: inout RunManifest) {
        if relay.mode != .sequence { manifest.mode = relay.mode }
        if let message {
            let mentions = Mentions.resolve(message, roster: roster.agents)
            if let notice = mentions.notice(roster: roster.agents) {
                manifest.mentionNotice = notice
            } else if !mentions.agents.isEmpty {
                manifest.mentioned = mentions.agents.map(\.id)
            }
        }
        switch relay.mode {
        case .sequence:
            break
        case .route:
            manifest.routing = relay.route
            if let transcript, relay.route.maxMessages >= 2 {
                let histories = Self.histories(inTranscript: transcript, agents: roster.agents.map(\.id), excludingTurn: manifest.id,
                                               maxMessages: relay.route.maxMessages)
                manifest.histories = histories.isEmpty ? nil : histories
            }
        case .plan:
            var plan = relay.plan
            let roles = plan.roles(in: roster.agents)
            (plan.planner, plan.worker, plan.coordinator) = (roles.planner, roles.worker, roles.coordinator)
            manifest.planning = plan
        }
    }

    /// The transcript of a chat, if it has one.
    func transcript(ofChat chatFile: String) -> String? {
        guard !chatFile.isEmpty, let bytes = try? workspace.read(Conversation.transcriptPath(forChat: chatFile)) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Each agent's earlier exchanges in a transcript: per turn it spoke in, the person's
    /// message and the agent's last message of that turn, oldest first, the newest
    /// `maxMessages / 2` pairs (a window counted in messages, rounded down to whole pairs).
    static func histories(inTranscript text: String, agents: [String], excludingTurn: String, maxMessages: Int) -> [String: [RunManifest.Exchange]] {
        guard let root = try? JSONValue(parsing: text), let messages = root["messages"]?.arrayValue else { return [:] }
        var turnOrder: [String] = []
        var requests: [String: String] = [:]
        var answers: [String: [String: String]] = [:]  // turn → agent → last text
        for message in messages {
            guard let turn = message["turn"]?.stringValue, turn != excludingTurn else { continue }
            if !turnOrder.contains(turn) { turnOrder.append(turn) }
            if message["role"]?.stringValue == "user" {
                requests[turn] = message["text"]?.stringValue ?? ""
            } else if let agent = message["agent"]?["id"]?.stringValue, let said = message["text"]?.stringValue,
                      !said.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                answers[turn, default: [:]][agent] = said
            }
        }
        let pairs = max(0, maxMessages / 2)
        var result: [String: [RunManifest.Exchange]] = [:]
        for agent in agents {
            let exchanges = turnOrder.compactMap { turn -> RunManifest.Exchange? in
                guard let request = requests[turn], let answer = answers[turn]?[agent] else { return nil }
                return RunManifest.Exchange(message: request, answer: answer)
            }
            let kept = Array(exchanges.suffix(pairs))
            if !kept.isEmpty { result[agent] = kept }
        }
        return result
    }
}

extension RelayRunner {
    /// The person's newest message in the text of a chat file (`Chats/NAME.md`) that no turn has
    /// answered yet: what they wrote after the last turn's end marker; nil when there is none.
    public static func unansweredMessage(inChat text: String) -> String? {
        Conversation.newMessage(in: text)
    }
}
