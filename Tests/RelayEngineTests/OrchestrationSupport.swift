import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import WorkspaceCore

extension ModelRequest {
    /// "3" for the request of worker 3 (its focused prompt names its subtask), nil otherwise.
    var workerNumber: Int? {
        guard let range = user.range(of: "[Your Subtask — ") else { return nil }
        return Int(user[range.upperBound...].prefix { $0.isNumber })
    }

    var schemaName: String? { options.responseSchema?.name }
}

/// Rosters and relay.json for the relay modes.
enum Modes {
    static func relayJSON(chat: String) -> String {
        """
        {
          "model": {"contextTokens": 4096},
          "relays": {
            "chat": \(chat)
          }
        }
        """
    }

    /// The four agents of ScratchWorkspace with route rules: Wren takes poems, Remy "find …".
    static let routedRoster = ScratchWorkspace.relayRoster
        .replacingOccurrences(of: #""systemPrompt": "You are Wren. Write.", "order": 2,"#,
                              with: #""systemPrompt": "You are Wren. Write.", "order": 2, "route": {"keywords": ["poem", "haiku"]},"#)
        .replacingOccurrences(of: #""systemPrompt": "You are Remy. Find facts.", "order": 1,"#,
                              with: #""systemPrompt": "You are Remy. Find facts.", "order": 1, "route": {"patterns": ["^find\\b"]},"#)
}
