import Foundation
import LanguageModels
import RelayEngine
import WorkspaceCore

/// The relay engine's scratch workspace: a roster, a relay.json and a context.md in place.
extension ScratchWorkspace {
    /// The relay's mechanics under test; the grounding check (its own tests) is off, so the
    /// placeholder replies here ("ANSWER-3") pass as they are.
    public static let relayRoster = """
        [
          {"id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "systemPrompt": "You are Paige. Plan.", "order": 0, "tools": [], "grounding": false},
          {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Find facts.", "order": 1, "grounding": false,
           "tools": ["read_file", "list_files", "search_files"]},
          {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Write.", "order": 2, "grounding": false,
           "tools": ["write_file", "append_file", "update_context"]},
          {"id": "reviewer", "name": "Vera", "emoji": "🔍", "color": "#9B59B6", "systemPrompt": "You are Vera. Review.", "order": 3, "grounding": false,
           "tools": ["request_revision"]}
        ]
        """

    public static let relayJSON = """
        {
          "model": {"contextTokens": 4096},
          "relays": {
            "chat": {"roster": "AgentConfiguration.json", "input": "chat"},
            "research": {"roster": "AgentConfiguration.json", "input": "file",
                         "agents": {"writer": {"output": {"write": "Research/{name}/summary.md"}},
                                    "reviewer": {"output": {"append": "Journal/agent/{date}.md"}}}}
          }
        }
        """

    /// A new scratch workspace holding `roster`, `relayJSON` and a one-line context.md.
    public static func forRelays(roster: String = ScratchWorkspace.relayRoster, relayJSON: String = ScratchWorkspace.relayJSON) throws -> ScratchWorkspace {
        let scratch = try ScratchWorkspace()
        try scratch.write("AgentConfiguration.json", roster)
        try scratch.write("relay.json", relayJSON)
        try scratch.write("context.md", "# Context\n\nThe team keeps llamas.\n")
        return scratch
    }

    public func engine(_ model: any LanguageModel) -> RelayRunner { RelayRunner(workspace: workspace, models: .single(model)) }

    /// Runs to the end and returns the events.
    @discardableResult
    public func run(_ engine: RelayRunner, _ id: String) async throws -> [RelayEvent] {
        let box = LockedBox<[RelayEvent]>([])
        try await engine.execute(id) { event in box.mutate { $0.append(event) } }
        return box.value
    }
}
