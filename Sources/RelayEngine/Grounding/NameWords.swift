/// Proper names in a run of chunks: sequences of capitalised words ("Ilse Varga", "Bank of
/// Lisbon", "O'Hara", "Saint-Étienne", "J. R. Tolkien"), with the words that only look like
/// names left out — a common word starting a sentence, months and weekdays, "I", capitals
/// that are markers ("APPROVED"), titles ("Dr."), and the words the engine says to ignore
/// (its agents' names).
enum NameWords {
    /// The name starting at `index`, its words and the chunks it takes; nil when the chunk
    /// there starts none. A run whose every word is common ("Key Findings", "Next Steps") is
    /// skipped whole: small models write Title Case, and such a run names nothing checkable.
    static func match(_ chunks: [ClaimChunk], at index: Int, ignoring: Set<String>) -> (words: [String], used: Int)? {
        let first = chunks[index]
        guard let firstWord = word(first, atStart: first.startsUnit || first.inHeading, ignoring: ignoring) else { return nil }
        var words = [firstWord.text]
        var checked = firstWord
        var end = index + 1
        while end < chunks.count, !checked.ends {
            let next = chunks[end]
            guard next.leading.isEmpty else { break }
            if let word = word(next, atStart: next.inHeading, ignoring: ignoring) {
                words.append(word.text)
                checked = word
                end += 1
            } else if let joined = joiners(chunks, at: end, ignoring: ignoring) {
                words += joined.words
                checked = joined.last
                end += joined.words.count
            } else {
                break
            }
        }
        // "Brew it", "Visit the museum": a capitalised word starting a sentence and followed
        // by an object is an imperative verb, not a name.
        // ("Anneke (my sister) turns 34" is a name: an object in brackets is not one.)
        if words.count == 1, first.startsUnit, first.trailing.isEmpty, index + 1 < chunks.count, chunks[index + 1].leading.isEmpty,
           CommonWords.objects.contains(chunks[index + 1].core.lowercased()) {
            return (words: [], used: 1)
        }
        let meaningful = words.filter { !CommonWords.nameJoiners.contains($0) && !$0.hasSuffix(".") }
        if meaningful.allSatisfy({ CommonWords.contains($0) }) { return (words: [], used: end - index) }
        return (words, end - index)
    }

    /// One or two joiners and the name word after them ("de la Cruz"), starting at `index`.
    private static func joiners(_ chunks: [ClaimChunk], at index: Int, ignoring: Set<String>) -> (words: [String], last: (text: String, ends: Bool))? {
        var end = index
        var words: [String] = []
        while end < chunks.count, end - index < 2, CommonWords.nameJoiners.contains(chunks[end].core),
              chunks[end].leading.isEmpty, chunks[end].trailing.isEmpty {
            words.append(chunks[end].core)
            end += 1
        }
        guard !words.isEmpty, end < chunks.count, chunks[end].leading.isEmpty,
              let last = word(chunks[end], atStart: chunks[end].inHeading, ignoring: ignoring) else { return nil }
        return (words + [last.text], last)
    }

    /// A chunk read as a word of a name: its text (without a possessive) and whether the name
    /// must end after it (punctuation or a possessive follows). Nil when it cannot be one.
    private static func word(_ chunk: ClaimChunk, atStart: Bool, ignoring: Set<String>) -> (text: String, ends: Bool)? {
        var text = chunk.core.replacingApostrophes()
        var possessive = false
        if text.hasSuffix("'s") || text.hasSuffix("'S") { text.removeLast(2); possessive = true }
        guard let first = text.unicodeScalars.first, first.properties.isAlphabetic,
              text.unicodeScalars.contains(where: { $0.properties.isUppercase }),
              text.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.generalCategory == .nonspacingMark || $0 == "-" || $0 == "'" }),
              text.last != "-", text.last != "'" else { return nil }
        let lowered = text.lowercased()
        // "J." is an initial: the name goes on ("J. R. Tolkien").
        let initial = text.count == 1 && chunk.trailing == "."
        if text.count == 1 && !initial { return nil }
        if lowered == "i" || lowered.hasPrefix("i'") { return nil }
        if DateValue.calendarWords.contains(lowered) || CommonWords.titles.contains(lowered) || ignoring.contains(lowered) { return nil }
        if text.count > 1, text == text.uppercased(), CommonWords.capitalArtifacts.contains(lowered) || CommonWords.contains(lowered) { return nil }
        // A sentence of notes often opens with a past verb: "Gave Ines the keys", "Met Mira".
        if atStart && (CommonWords.contains(text) || SearchTerms.irregular[lowered] != nil) { return nil }
        return (initial ? text + "." : text, possessive || !(chunk.trailing.isEmpty || initial))
    }
}
