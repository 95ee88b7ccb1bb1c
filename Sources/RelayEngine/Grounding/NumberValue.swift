/// What a chunk with digits in it says, normalised so that the ways of writing one value
/// compare equal: "4,200" and "4200", "4.20" and "4.2", "€3.50" and "3.5", "21st" and "21".
enum NumberValue: Hashable {
    /// A value: "4200", "4.2", "3/4" (a fraction), "9:30" (a time).
    case value(String)
    /// Digits inside a name, path, version or address ("Research/tea2/summary.md", "v2.1.0",
    /// "H2O", "https://x.org/2024"): only the same text, verbatim, supports it.
    case identifier(String)

    /// The numbers in `core` (a chunk without its surrounding punctuation), each with the text
    /// it was written as. A range "10-15%" is two numbers; "4,2" (not a thousands group) is two.
    static func parse(_ core: String) -> [(text: String, value: NumberValue)] {
        guard core.contains(where: \.isNumber) else { return [] }
        if isIdentifier(core) { return [(core, .identifier(core.lowercased()))] }
        var result: [(String, NumberValue)] = []
        for piece in core.split(whereSeparator: { $0 == "-" || $0 == "\u{2013}" || $0 == "\u{2212}" || $0 == "~" }) {
            guard piece.contains(where: \.isNumber) else { continue }
            guard let parsed = parsePiece(piece) else { return [(core, .identifier(core.lowercased()))] }
            result += parsed.map { (String($0.text), NumberValue.value($0.value)) }
        }
        return result
    }

    /// Whether `core` holds its digits inside something that is not a number: a URL, a path,
    /// a file name, a version ("1.2.3"), letters before digits ("v2", "H2O", "A4").
    static func isIdentifier(_ core: String) -> Bool {
        let scalars = Array(core.unicodeScalars)
        let hasLetters = scalars.contains { $0.properties.isAlphabetic }
        guard hasLetters else { return false }
        if core.utf8.starts(with: "www.".utf8) || core.utf8.starts(with: "WWW.".utf8) { return true }
        if scalars.contains(where: { "/\\_@=#:".unicodeScalars.contains($0) }) { return true }
        // A dot between letters: a file name or domain ("tea2.md", "x2.org").
        for index in scalars.indices.dropFirst().dropLast() where scalars[index] == "." {
            if scalars[index - 1].properties.isAlphabetic || scalars[index + 1].properties.isAlphabetic { return true }
        }
        return false
    }

    /// One piece of a range: an optional currency or sign, the digits (with `,` `.` `/` `:`),
    /// then an optional ordinal, percent or unit ("12kg", "2pm"). Nil when letters come before
    /// the digits or between them ("v2", "2a3"): that is an identifier.
    private static func parsePiece(_ piece: Substring) -> [(text: Substring, value: String)]? {
        var body = piece
        for code in ["US$", "A$", "C$", "R$"] where body.hasPrefix(code) { body = body.dropFirst(code.count) }
        body = body.drop { currencyAndSigns.contains($0) }
        guard let firstDigit = body.first, firstDigit.isNumber || firstDigit == "." else { return nil }
        let numeric = body.prefix { ($0.isASCII && $0.isNumber) || ",./:".contains($0) }
        let suffix = body.dropFirst(numeric.count)
        guard suffix.allSatisfy({ $0.isLetter || "%‰°'".contains($0) || currencyAndSigns.contains($0) }) else { return nil }
        let digits = numeric.trimmingSuffix { ",./:".contains($0) }
        guard !digits.isEmpty else { return nil }
        if digits.contains(Character("/")) || digits.contains(Character(":")) {
            let separator: Character = digits.contains(Character("/")) ? "/" : ":"
            let parts = digits.split(separator: separator, omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }) else { return nil }
            return [(piece, parts.map { normalisedInteger(String($0)) }.joined(separator: String(separator)))]
        }
        if digits.contains(Character(",")) {
            let groups = digits.split(separator: ",", omittingEmptySubsequences: false)
            let thousands = (1...3).contains(groups[0].count) && groups.dropFirst().dropLast().allSatisfy { $0.count == 3 }
                && (groups.last.map { $0.count == 3 || ($0.count > 3 && $0.dropFirst(3).first == ".") } ?? false)
            if thousands {
                return decimal(digits.filter { $0 != "," }).map { [(piece, $0)] }
            }
            return groups.compactMap { group in
                decimal(Substring(group)).map { (group, $0) }
            }
        }
        return decimal(Substring(digits)).map { [(piece, $0)] }
    }

    private static let currencyAndSigns: Set<Character> = ["€", "$", "£", "¥", "₹", "₩", "₽", "+", "±", "≈", "~"]

    /// "4.20" → "4.2", "007" → "7", ".5" → "0.5", "4.0" → "4"; nil for "1.2.3".
    private static func decimal<S: StringProtocol>(_ text: S) -> String? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ $0.allSatisfy(\.isNumber) }), parts.contains(where: { !$0.isEmpty }) else { return nil }
        let whole = normalisedInteger(String(parts[0]))
        guard parts.count == 2 else { return whole }
        let fraction = parts[1].trimmingSuffix { $0 == "0" }
        return fraction.isEmpty ? whole : whole + "." + fraction
    }

    /// Digits without leading zeros ("0" stays "0"), ASCII whatever the script they came in.
    static func normalisedInteger(_ digits: String) -> String {
        let ascii = String(digits.compactMap { $0.wholeNumberValue.map { Character(String($0)) } })
        let trimmed = ascii.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
}

extension StringProtocol {
    /// The text without its last characters that satisfy `predicate`.
    func trimmingSuffix(while predicate: (Character) -> Bool) -> SubSequence {
        var end = endIndex
        while end > startIndex {
            let before = index(before: end)
            guard predicate(self[before]) else { break }
            end = before
        }
        return self[startIndex..<end]
    }
}
