import RelayEngine
import WorkspaceCore

/// The API's model ids: each relay of relay.json by its name (`chat`), and each agent of its
/// roster as `RELAY/AGENT-ID` (`chat/writer`), so a client can talk to the relay or one agent.
struct ModelCatalog: Sendable {
    struct Entry: Sendable, Equatable {
        var id: String
        var relay: String
        var agent: String?
        var description: String
    }

    let entries: [Entry]
    let defaultRelay: String

    /// Reads relay.json and the rosters now (a person may have edited them since the start).
    init(workspace: Workspace, defaultRelay: String?) throws {
        let configuration: RelayConfiguration
        do { configuration = try RelayConfiguration.load(from: workspace) } catch {
            throw APIError(.configuration, "relay.json: \(error)")
        }
        var entries: [Entry] = []
        for relay in configuration.relays {
            entries.append(Entry(id: relay.name, relay: relay.name, agent: nil, description: relay.description))
            guard let roster = try? configuration.roster(for: relay, in: workspace) else { continue }
            for agent in roster.agents {
                entries.append(Entry(id: "\(relay.name)/\(agent.id)", relay: relay.name, agent: agent.id, description: "\(agent.emoji) \(agent.name)"))
            }
        }
        self.entries = entries
        self.defaultRelay = defaultRelay ?? configuration.defaultRelay.name
    }

    /// The relay and agent a request's `model` names; no model (or `relay`) is the default relay.
    /// - throws: ``APIError`` `.modelNotFound` listing the ids there are.
    func resolve(_ model: String?) throws -> Entry {
        guard let model, !model.isEmpty, model != "relay" else {
            return entries.first { $0.id == defaultRelay && $0.agent == nil }
                ?? Entry(id: defaultRelay, relay: defaultRelay, agent: nil, description: "")
        }
        if let found = entries.first(where: { $0.id == model }) { return found }
        throw APIError(.modelNotFound, "no model '\(model)' here; the models are the relays and their agents: \(entries.map(\.id).joined(separator: ", ")) (GET /v1/models)")
    }
}
