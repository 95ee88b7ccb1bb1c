import Foundation

/// `@Name` mentions in a person's message: `@Wren shorter, please` sends the turn to Wren alone,
/// `@Paige @Wren …` to Paige and Wren in roster order, skipping the rest of the relay.
///
/// A mention is `@` at the start of the message or after a space or punctuation (so an e-mail
/// address is none), followed by an agent's name or id in any case. Inside a code span
/// (`` `@Wren` ``) or a fenced code block it is text, not a mention. The chat file, `relay ask`
/// and the HTTP API call the same function, so a message means the same everywhere.
///
/// For example:
/// ```swift
/// let found = Mentions.resolve("@wren and @Paige: a haiku", roster: roster.agents)
/// found.agents.map(\.name)   // ["Paige", "Wren"] (roster order)
/// found.unknown              // []
/// ```
public struct Mentions: Sendable, Equatable {
    /// The agents mentioned, in roster order, once each.
    public var agents: [AgentDefinition]
    /// Mentioned names that are no agent of the roster, as written (without the `@`).
    public var unknown: [String]

    /// Whether the message mentions anyone (known or not).
    public var isEmpty: Bool { agents.isEmpty && unknown.isEmpty }

    /// The message a chat gets for an unknown mention: what was not found and who there is.
    public func notice(roster: [AgentDefinition]) -> String? {
        guard !unknown.isEmpty else { return nil }
        let names = unknown.map { "@\($0)" }.joined(separator: ", ")
        let listed = roster.map { "@\($0.name) (\($0.emoji.isEmpty ? "" : $0.emoji + " ")\($0.id))" }.joined(separator: ", ")
        return "No agent is called \(names) in this relay, so no agent was asked. The agents are: \(listed). "
            + "Write your message again with one of these names, or without a mention for the whole relay."
    }

    /// The mentions of `message` among `roster` (any order; the result is in running order).
    public static func resolve(_ message: String, roster: [AgentDefinition]) -> Mentions {
        var found: Set<String> = []
        var unknown: [String] = []
        for written in names(in: message) {
            let wanted = written.lowercased()
            if let agent = roster.first(where: { $0.name.lowercased() == wanted || $0.id.lowercased() == wanted }) {
                found.insert(agent.id)
            } else if !unknown.contains(where: { $0.lowercased() == wanted }) {
                unknown.append(written)
            }
        }
        return Mentions(agents: roster.filter { found.contains($0.id) }, unknown: unknown)
    }

    /// The names written after `@` outside code, in the message's order.
    static func names(in message: String) -> [String] {
        var result: [String] = []
        var inFence = false
        for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") || line.trimmingCharacters(in: .whitespaces).hasPrefix("~~~") {
                inFence.toggle()
                continue
            }
            if inFence || line.hasPrefix("    ") || line.hasPrefix("\t") { continue }
            result += names(inLine: Array(line))
        }
        return result
    }

    private static func names(inLine characters: [Character]) -> [String] {
        var result: [String] = []
        var index = 0
        var openTicks = 0  // the length of the backtick run that opened the current code span
        while index < characters.count {
            let character = characters[index]
            if character == "`" {
                var run = 0
                while index < characters.count, characters[index] == "`" { run += 1; index += 1 }
                if openTicks == 0 {
                    // A span opens only if a closing run of the same length follows on the line.
                    if hasClosing(run, in: characters, from: index) { openTicks = run }
                } else if run == openTicks {
                    openTicks = 0
                }
                continue
            }
            defer { index += 1 }
            guard openTicks == 0, character == "@" else { continue }
            if index > 0, characters[index - 1].isLetter || characters[index - 1].isNumber || characters[index - 1] == "@" { continue }
            var end = index + 1
            while end < characters.count, characters[end].isLetter || characters[end].isNumber || "_.-".contains(characters[end]) { end += 1 }
            var name = String(characters[(index + 1)..<end])
            while let last = name.last, ".-_".contains(last) { name.removeLast() }
            if !name.isEmpty { result.append(name) }
        }
        return result
    }

    private static func hasClosing(_ run: Int, in characters: [Character], from start: Int) -> Bool {
        var index = start
        while index < characters.count {
            guard characters[index] == "`" else { index += 1; continue }
            var length = 0
            while index < characters.count, characters[index] == "`" { length += 1; index += 1 }
            if length == run { return true }
        }
        return false
    }
}
