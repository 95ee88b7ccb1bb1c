import Foundation

/// Draft, and a request not about the workspace: the answering agent writes freely. A draft is
/// written from the lines the agent before it found, then the grounding check removes (or asks
/// to revise) any name, number or date not in its inputs, and the engine makes sure the draft
/// names whom the request named. A request not about the workspace ("List three facts about
/// rivers") gets the model's own answer, labelled as such and not checked against the notes.
extension RunExecutor {
    /// What an `extract: answer` agent writes under, for the kinds that write.
    static let draftInstruction = """
        Now write the text the request asks for (a message, an email, a note): a few friendly sentences in the person's voice. \
        Use only the names, dates, places and numbers that the request and the previous agent's notes hold.
        """
    static let generalInstruction = "Answer the request briefly and plainly from your own knowledge, in at most five short lines."

    /// `agent` as it writes for this request: with the draft's instruction, or — for a request
    /// not about the workspace — told to answer from its own knowledge.
    func writing(_ agent: AgentDefinition, part: FocusedPrompt.Part) -> AgentDefinition {
        guard agent.extract == .answer, let analysis = manifest.analysis, manifest.document == nil, case .relay = part else { return agent }
        var agent = agent
        if isGeneralRequest {
            agent.systemPrompt = "You are \(agent.name). " + Self.generalInstruction
        } else if analysis.kind == .draft {
            agent.systemPrompt += "\n\n" + Self.draftInstruction
        }
        return agent
    }

    /// The written text as the turn gives it: labelled when it is the model's own answer; a
    /// draft that leaves out whom the request named gets a greeting naming them.
    func finishedWriting(_ text: String, agent: AgentDefinition) -> String {
        guard agent.extract == .answer, let analysis = manifest.analysis, manifest.document == nil else { return text }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if isGeneralRequest { return trimmed.isEmpty || trimmed.hasPrefix(Self.generalOpening) ? trimmed : Self.generalOpening + "\n" + trimmed }
        guard analysis.kind == .draft else { return text }
        let named = Claims.extract(from: manifest.requestLead, ignoring: ignoredNames).filter { $0.kind == .name }.map(\.text)
        let missing = named.filter { name in !trimmed.localizedCaseInsensitiveContains(name.split(separator: " ").first.map(String.init) ?? name) }
        guard let first = missing.first else { return trimmed }
        return "Hi \(first.split(separator: " ").first.map(String.init) ?? first),\n\n" + trimmed
    }
}
