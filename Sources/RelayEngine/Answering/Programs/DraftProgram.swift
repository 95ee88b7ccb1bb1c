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

    /// Signs that a text is not a draft but the model speaking about its task: the prompt's
    /// markers ("[User Request — Remy]:" too), a source cited as the agents cite them (a message
    /// to a person does not say "(Journal/user/…)"), talk of "the user" or of the agents, or far
    /// too long.
    static let noDraftSigns = ["[user request", "(journal/", "(research/", "(context.md", "(chats/", "[previous agent", "output]:", "the user ", "the user's", "i was unable", "revision request",
                               "as an ai", "i cannot", "the request", "previous output", "original prompt", "the prompt", "your output",
                               "i've attached", "i have attached", "please find attached"]

    /// Whether `text` speaks of what the request asks about: a draft that names none of the
    /// request's own words but the addressee's ("Write a note to Marek asking him to fix the
    /// back door lock" answered with good wishes for his work) is not the draft asked for.
    static func speaksOfPurpose(_ text: String, request: String, ignoring: Set<String>) -> Bool {
        let names = Set(Claims.extract(from: request, ignoring: ignoring).filter { $0.kind == .name }.flatMap { SearchTerms.terms(of: $0.text) })
        let purpose = Support.topicTerms(of: request).subtracting(names).subtracting(SearchTerms.terms(of: draftWords))
        return purpose.isEmpty || !purpose.isDisjoint(with: SearchTerms.terms(of: text))
    }

    static let draftWords = "draft write compose prepare note message text email letter reply short quick asking ask checking check"

    static func isNoDraft(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return text.isEmpty || noDraftSigns.contains(where: lowered.contains) || text.split(whereSeparator: \.isWhitespace).count > mostDraftWords
    }

    /// `text` without the lines that hold the prompt's markers ("[User Request]:", "[Previous
    /// Agent …]") and without the sources cited as the agents cite them ("(Journal/user/…:3)").
    static func cleanedDraft(_ text: String) -> String {
        let markers = ["[user request", "[previous agent", "output]:", "[workspace lines", "revision request"]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { line in !markers.contains { line.lowercased().contains($0) } }
        let uncited = lines.joined(separator: "\n")
            .replacingOccurrences(of: #" ?\((Journal|Research|Chats|context\.md)[^)]*\)"#, with: "", options: .regularExpression)
        return uncited.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The longest draft kept: a message to a person in a few sentences. Past it a small model is
    /// writing a letter about nothing ("I hope this message finds you well… I've attached a
    /// document…"), and the engine's plain draft says what was asked.
    static let mostDraftWords = 90

    /// Whether `text` repeats the request instead of answering it (a small model's echo).
    static func echoes(_ text: String, request: String) -> Bool {
        let opening = SearchTerms.terms(of: request).prefix(6).joined(separator: " ")
        if !opening.isEmpty && SearchTerms.terms(of: text).joined(separator: " ").contains(opening) { return true }
        // "Draft a message to Marek asking for my ladder back" for "Draft a short message
        // to …": it opens with the request's own verb and holds most of its words.
        let asked = Set(SearchTerms.terms(of: request))
        let first = { (s: String) in s.split(whereSeparator: { !$0.isLetter }).first.map { $0.lowercased() } ?? "" }
        return !asked.isEmpty && first(text) == first(request) && Double(asked.intersection(SearchTerms.terms(of: text)).count) >= 0.7 * Double(asked.count)
    }

    /// The engine's plain draft of "Draft a message to NAME asking for X / asking him to X /
    /// about X / to say X": a greeting, the request turned to the first person, thanks.
    static func plainDraft(for request: String, ignoring: Set<String>) -> String? {
        let name = Claims.extract(from: request, ignoring: ignoring).first { $0.kind == .name }?.text.split(separator: " ").first.map(String.init)
        var purpose = request.trimmingCharacters(in: CharacterSet(charactersIn: " .!?"))
        let lowered = purpose.lowercased()
        let openings: [(String, String)] = [
            (" asking for ", "Could I have "), (" asking him to ", "Could you "), (" asking her to ", "Could you "), (" asking them to ", "Could you "),
            (" asking if ", "I wondered if "), (" asking whether ", "I wondered whether "), (" asking ", "Could you tell me "),
            (" to ask for ", "Could I have "), (" to ask if ", "I wondered if "), (" about ", "I wanted to write to you about "),
            (" to say ", ""), (" saying ", ""), (" to tell them ", ""), (" to tell him ", ""), (" to tell her ", ""), (" thanking ", "Thank you "),
            (" checking ", "Just checking "), (" to check ", "Just checking "), (" reminding ", "Just a reminder: "),
            (" to remind ", "Just a reminder: "), (" with my apologies for ", "My apologies for "), (" with apologies for ", "My apologies for "),
            (" apologising for ", "I'm sorry about "), (" apologizing for ", "I'm sorry about "), (" to apologise for ", "I'm sorry about "),
            (" to apologize for ", "I'm sorry about "), (" congratulating ", "Congratulations: "),
        ] + (lowered.contains("thank") ? [(" for ", "Thank you for ")] : [])
        guard let (marker, lead) = openings.first(where: { lowered.contains($0.0) }), let range = lowered.range(of: marker) else { return nil }
        purpose = String(purpose[purpose.index(purpose.startIndex, offsetBy: lowered.distance(from: lowered.startIndex, to: range.upperBound))...])
        // Said to them, not about them: "she's still fine" → "you're still fine".
        for (third, second) in [(" she's ", " you're "), (" he's ", " you're "), (" they're ", " you're "), (" she ", " you "), (" he ", " you "),
                                (" his ", " your "), (" them ", " you ")] {
            purpose = (" " + purpose + " ").replacingOccurrences(of: third, with: second).trimmingCharacters(in: .whitespaces)
        }
        if purpose.hasPrefix("she's ") || purpose.hasPrefix("he's ") { purpose = "you're " + purpose.split(separator: " ", maxSplits: 1).last! }
        if purpose.hasPrefix("she ") || purpose.hasPrefix("he ") { purpose = "you " + purpose.split(separator: " ", maxSplits: 1).last! }
        var body = lead.isEmpty ? purpose.prefix(1).uppercased() + purpose.dropFirst() : lead + purpose
        body += lead.hasPrefix("Could") || lead.hasPrefix("I wondered") ? "?" : "."
        return "Hi \(name ?? "there"),\n\n\(body)\n\nThanks!"
    }

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
        // A small model that talks about the request instead of writing the text ("The user
        // requested that I …", the prompt's own markers) gets the engine's plain draft instead.
        var draft = trimmed
        if Self.isNoDraft(trimmed) || Self.echoes(trimmed, request: manifest.requestLead)
            || !Self.speaksOfPurpose(trimmed, request: manifest.requestLead, ignoring: ignoredNames) {
            if let plain = Self.plainDraft(for: manifest.requestLead, ignoring: ignoredNames) { return plain }
            // A request of no shape the plain draft knows: what the model wrote, without the
            // prompt's markers and the agents' citations, which no message to a person holds.
            draft = Self.cleanedDraft(trimmed)
        }
        let named = Claims.extract(from: manifest.requestLead, ignoring: ignoredNames).filter { $0.kind == .name }.map(\.text)
        let missing = named.filter { name in !draft.localizedCaseInsensitiveContains(name.split(separator: " ").first.map(String.init) ?? name) }
        guard let first = missing.first else { return draft }
        return "Hi \(first.split(separator: " ").first.map(String.init) ?? first),\n\n" + draft
    }
}
