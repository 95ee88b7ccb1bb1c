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
        var word: [UInt8] = []
        var hasLetter = false, ascii = true
        func flush() {
            defer { word.removeAll(keepingCapacity: true); hasLetter = false; ascii = true }
            guard !word.isEmpty, !(hasLetter && word.count == 1) else { return }
            let lowered = ascii ? word : Array(String(decoding: word, as: UTF8.self).lowercased().utf8)
            let raw = String(decoding: lowered, as: UTF8.self)
            guard !stopwords.contains(raw) else { return }
            let base = irregular[raw].map { Array($0.utf8) } ?? lowered
            let stemmed = hasLetter ? String(decoding: stem(base), as: UTF8.self) : raw
            if !stopwords.contains(stemmed) { result.append(synonyms[stemmed] ?? stemmed) }
        }
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                index += 1
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"): word.append(byte); hasLetter = true
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): word.append(byte | 0x20); hasLetter = true
                case UInt8(ascii: "0")...UInt8(ascii: "9"): word.append(byte)
                // "4.2" stays one number; "4,200" becomes "4200".
                case UInt8(ascii: "."), UInt8(ascii: ","):
                    if !word.isEmpty, !hasLetter, index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                        if byte == UInt8(ascii: ".") { word.append(byte) }
                    } else {
                        flush()
                    }
                default: flush()
                }
                continue
            }
            guard let scalar = SentenceBoundaries.scalar(bytes, index) else { index += 1; flush(); continue }
            let width = UTF8.width(scalar)
            if scalar.properties.isAlphabetic || scalar.properties.generalCategory == .nonspacingMark || scalar.properties.numericType != nil {
                word += bytes[index..<(index + width)]
                hasLetter = hasLetter || scalar.properties.isAlphabetic
                ascii = false
            } else {
                flush()
            }
            index += width
        }
        flush()
        return result
    }

    /// A conservative English stemmer: plural `-s`, `-es`, `-ies`; `-ing` and `-ed` (with a
    /// doubled consonant undone: "running" → "run"); then a final silent `e` ("named" and
    /// "name" both become "nam"). Applied to both sides, so only agreement matters. It works
    /// on the lowercase UTF-8 bytes and only ever takes off ASCII letters.
    static func stem(_ word: String) -> String { String(decoding: stem(Array(word.utf8)), as: UTF8.self) }

    private static func stem(_ word: [UInt8]) -> [UInt8] {
        var letters = word
        func ends(_ suffix: String) -> Bool { letters.count > suffix.utf8.count && letters.suffix(suffix.utf8.count).elementsEqual(suffix.utf8) }
        func isVowel(_ byte: UInt8) -> Bool { "aeiouy".utf8.contains(byte) }
        // Plurals.
        if ends("ies"), letters.count > 4 {
            letters.removeLast(3)
            letters.append(UInt8(ascii: "y"))
        } else if ends("sses") {
            letters.removeLast(2)
        } else if ends("es"), letters.count > 4, "sxz".utf8.contains(letters[letters.count - 3]) || ends("ches") || ends("shes") {
            letters.removeLast(2)
        } else if ends("s"), letters.count > 3, !ends("ss"), !ends("us"), !ends("is") {
            letters.removeLast()
        }
        // Verb endings, when a stem of three letters or more with a vowel is left.
        var strippedVerbEnding = false
        for suffix in ["ing", "ed"] where ends(suffix) && !ends("eed") {
            let stem = letters.dropLast(suffix.utf8.count)
            guard stem.count >= 3, stem.contains(where: isVowel) else { continue }
            letters = Array(stem)
            strippedVerbEnding = true
            break
        }
        if strippedVerbEnding, letters.count >= 3, let last = letters.last, letters[letters.count - 2] == last,
           (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(last), !"aeiouylsz".utf8.contains(last) {
            letters.removeLast()
        }
        // A silent e after a consonant.
        if letters.count >= 4, letters.last == UInt8(ascii: "e"), !isVowel(letters[letters.count - 2]) {
            letters.removeLast()
        }
        return letters
    }

    /// Stems that mean the same in a question and its answer ("How much does it cost?" — "It is
    /// priced at …"; "who is lending us the chair?" — "we can borrow her chair"), each to one
    /// of them.
    static let synonyms: [String: String] = ["pric": "cost", "borrow": "lend", "loan": "lend"]

    /// The past forms of common irregular verbs, to their present ("we chose" meets "why did we
    /// choose"; "led" meets "leads").
    static let irregular: [String: String] = [
        "chose": "choose", "chosen": "choose", "bought": "buy", "paid": "pay", "ran": "run", "led": "lead", "began": "begin", "begun": "begin",
        "sold": "sell", "made": "make", "took": "take", "taken": "take", "found": "find", "gave": "give", "given": "give", "went": "go",
        "gone": "go", "met": "meet", "spent": "spend", "built": "build", "wrote": "write", "written": "write", "won": "win", "lost": "lose",
        "left": "leave", "kept": "keep", "held": "hold", "brought": "bring", "sent": "send", "felt": "feel", "grew": "grow", "grown": "grow",
        "drove": "drive", "driven": "drive", "flew": "fly", "flown": "fly", "rode": "ride", "swam": "swim", "broke": "break", "broken": "break",
        "fell": "fall", "fallen": "fall", "ate": "eat", "eaten": "eat", "drank": "drink", "sang": "sing", "sat": "sit", "stood": "stand",
        "taught": "teach", "thought": "think", "caught": "catch", "fought": "fight", "hid": "hide", "lent": "lend", "rang": "ring",
        "saw": "see", "seen": "see", "payment": "pay", "payments": "pay", "came": "come", "became": "become", "got": "get", "gotten": "get", "moved": "move", "hung": "hang",
    ]

    static let stopwords: Set<String> = Set("""
        what who whom whose when where which how why whats whos much many \
        is are was were be been being am do does did done doing have has had having will would shall should \
        can could may might must \
        a an the \
        i me my mine myself you your yours yourself he him his himself she her hers herself it its itself \
        we us our ours ourselves they them their theirs themselves this that these those there here \
        of in on at to for from by with about into onto over under after before between through during \
        without within as up down out off upon than \
        and or but if so then not no nor also just very too any some all \
        tell know please say said told get got \
        s t d ll m re ve
        """.split(whereSeparator: \.isWhitespace).map(String.init))
}
