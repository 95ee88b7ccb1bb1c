import Foundation
import LanguageModels

/// The model chooses a request's kind where the grammar cannot tell: no question word, no
/// auxiliary, no imperative the rules know opens it ("The boiler service", "Anything about the
/// shed"). ``RequestRules`` marks such an analysis `undecided`; before the agents run, one model
/// call chooses among the kinds under a JSON schema (llama-server enforces it with a grammar, so
/// the reply is a kind and nothing else), and the run's evidence is gathered again for that kind.
///
/// The call is journaled under the key `kind` like any other, so a resume does not ask again,
/// and the run's manifest is rewritten with the chosen kind and its evidence, so a replay needs
/// no call at all and reads the same lines.
extension RunExecutor {
    /// The kinds offered. Compute and compare are not: their programs need the operation the
    /// request's words name ("sum", "cheapest"), and a request whose words named one was not
    /// undecided.
    static let choosableKinds: [(kind: RequestKind, means: String)] = [
        (.lookup, "asks for one fact: a name, a date, an amount, an address"),
        (.list, "asks for every item of some sort: tasks, people, things"),
        (.yesNo, "asks whether something is so or happened"),
        (.summarise, "asks what the notes say about a day, a week or a topic, in short"),
        (.draft, "asks for a message or text to be written"),
        (.other, "anything else"),
    ]

    static let kindInstruction = """
        You sort a request to a notes workspace by what it asks for. Reply only with JSON: {"kind": "..."}.
        """

    /// The kind the model chooses for the request, or nil when there is no agent to ask.
    func chooseKind() async throws -> RequestKind? {
        guard let agent = agents.first else { return nil }
        let kinds = Self.choosableKinds.map { "- \($0.kind.rawValue): \($0.means)" }.joined(separator: "\n")
        let user = "[User Request]:\n\(requestLead)\n\n[Kinds]:\n\(kinds)\n\nWhich kind is the request?"
        var options = ModelOptions(maxTokens: 16)
        options.responseSchema = ResponseSchema(name: "kind", schema: [
            "type": "object",
            "properties": ["kind": ["type": "string", "enum": .array(Self.choosableKinds.map { .string($0.kind.rawValue) })]],
            "required": ["kind"], "additionalProperties": false,
        ])
        let answer = try await modelCall("kind", step: 0, agent: agent,
                                         request: ModelRequest(messages: [.system(Self.kindInstruction), .user(user)], options: options),
                                         quiet: true, streams: false)
        let chosen = (try? JSONValue(parsing: answer.reply.text))?["kind"]?.stringValue
        return chosen.flatMap(RequestKind.init(rawValue:)).flatMap { kind in Self.choosableKinds.contains { $0.kind == kind } ? kind : nil }
    }
}

extension RequestAnalysis {
    /// The analysis once the model has chosen `kind` for an undecided request: what that kind's
    /// program needs is read from the request's words as the rules would have.
    func chosen(_ kind: RequestKind, request: String) -> RequestAnalysis {
        var analysis = self
        analysis.kind = kind
        analysis.undecided = nil
        analysis.why = "the model chose it (\(why))"
        if kind == .lookup {
            analysis.value = RequestRules.value(asked: " " + RequestRules.words(of: request).joined(separator: " ") + " ")
        }
        return analysis
    }
}
