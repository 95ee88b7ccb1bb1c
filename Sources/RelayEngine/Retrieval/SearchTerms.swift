/// How a request and a workspace line become search terms: lowercase words and numbers,
/// without the words every question has (question words, auxiliaries, articles, pronouns,
/// prepositions, "tell", "know", "please", "say"), each reduced by a light stemmer so "cats",
/// "cat", "called" and "call" meet.
enum SearchTerms {
    /// The terms of `text`, in order, repeats kept (a line's length counts them).
    ///
    /// For example, `terms(of: "What is the cat called?")` is `["cat", "call"]`, and a number
    /// keeps its decimals and loses its thousands commas: "4,200.5" is `"4200.5"`.
    static func terms<S: StringProtocol>(of text: S) -> [String] {
        var result: [String] = []
        var word = String.UnicodeScalarView()
        var hasLetter = false
        func flush() {
            defer { word.removeAll(keepingCapacity: true); hasLetter = false }
            guard !word.isEmpty else { return }
            let lowered = String(word).lowercased()
            if hasLetter && lowered.unicodeScalars.count == 1 { return }
            guard !stopwords.contains(lowered) else { return }
            let stemmed = hasLetter ? stem(lowered) : lowered
            if !stopwords.contains(stemmed) { result.append(stemmed) }
        }
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            if scalar.properties.isAlphabetic || scalar.properties.generalCategory == .nonspacingMark {
                word.append(scalar)
                hasLetter = true
            } else if scalar.properties.numericType != nil {
                word.append(scalar)
            } else if scalar == "." || scalar == ",", !word.isEmpty, !hasLetter,
                      index + 1 < scalars.count, scalars[index + 1].properties.numericType != nil {
                // "4.2" stays one number; "4,200" becomes "4200".
                if scalar == "." { word.append(scalar) }
            } else {
                flush()
            }
        }
        flush()
        return result
    }

    /// A conservative English stemmer: plural `-s`, `-es`, `-ies`; `-ing` and `-ed` (with a
    /// doubled consonant undone: "running" → "run"); then a final silent `e` ("named" and
    /// "name" both become "nam"). Applied to both sides, so only agreement matters.
    static func stem(_ word: String) -> String {
        var letters = Array(word)
        func ends(_ suffix: String) -> Bool { letters.count > suffix.count && letters.suffix(suffix.count).elementsEqual(suffix) }
        // Plurals.
        if ends("ies"), letters.count > 4 {
            letters.removeLast(3)
            letters.append("y")
        } else if ends("sses") {
            letters.removeLast(2)
        } else if ends("es"), letters.count > 4, let before = letters.dropLast(2).last,
                  "sxz".contains(before) || ends("ches") || ends("shes") {
            letters.removeLast(2)
        } else if ends("s"), letters.count > 3, !ends("ss"), !ends("us"), !ends("is") {
            letters.removeLast()
        }
        // Verb endings, when a stem of three letters or more with a vowel is left.
        var strippedVerbEnding = false
        for suffix in ["ing", "ed"] where ends(suffix) && !ends("eed") {
            let stem = letters.dropLast(suffix.count)
            guard stem.count >= 3, stem.contains(where: { "aeiouy".contains($0) }) else { continue }
            letters = Array(stem)
            strippedVerbEnding = true
            break
        }
        if strippedVerbEnding, letters.count >= 3, let last = letters.last, letters[letters.count - 2] == last,
           !"aeiouylsz".contains(last) {
            letters.removeLast()
        }
        // A silent e after a consonant.
        if letters.count >= 4, letters.last == "e", let before = letters.dropLast().last, !"aeiouy".contains(before) {
            letters.removeLast()
        }
        return String(letters)
    }

    static let stopwords: Set<String> = Set("""
        what who whom whose when where which how why whats whos \
        is are was were be been being am do does did done doing have has had having will would shall should \
        can could may might must \
        a an the \
        i me my mine myself you your yours yourself he him his himself she her hers herself it its itself \
        we us our ours ourselves they them their theirs themselves this that these those there here \
        of in on at to for from by with about into onto over under after before between through during \
        without within as up down out off upon than \
        and or but if so then not no nor also just very too any some all \
        tell know please say said told \
        s t d ll m re ve
        """.split(whereSeparator: \.isWhitespace).map(String.init))
}
