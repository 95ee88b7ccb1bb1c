import Foundation

/// Values that are spans of characters rather than words the claim scanner sees: email
/// addresses, phone numbers, web addresses, street addresses, and a time of day. A lookup that
/// asks for one of these is answered with a span found in a line, whole — never with digits
/// cut out of another value. Pure functions of their arguments.
enum ValueSpans {
    /// The spans of `kind` in `line`, in order.
    static func find(_ kind: ValueKind, in line: String) -> [String] {
        switch kind {
        case .email: matches(of: email, in: line)
        case .url: matches(of: url, in: line)
        case .phone: matches(of: phone, in: line).filter(isPhone)
        case .address: matches(of: address, in: line).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " ,.;")) }
        case .time: matches(of: time, in: line)
        case .code: matches(of: code, in: line)
        default: []
        }
    }

    /// `name@host.tld`.
    static let email = try! NSRegularExpression(pattern: #"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"#)
    /// `https://…`, `www.…`.
    static let url = try! NSRegularExpression(pattern: #"(?:https?://|www\.)[^\s<>()\]]+[^\s<>()\].,;:!?]"#)
    /// Digits in groups with spaces, dots, dashes or brackets, an optional leading `+`: at least
    /// seven digits (``isPhone``), so a date or an amount is not a phone number.
    static let phone = try! NSRegularExpression(pattern: #"(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,5}(?:[ .-]\d{2,5}){1,4}|\+?\d{7,14}"#)
    /// A house number, then capitalised words ending in a street word ("14 Alder Row",
    /// "3b Kiln Lane"), and the town after a comma when one follows ("…, Harwick").
    static let streetWords = [
        "Street", "St", "Road", "Rd", "Lane", "Ln", "Avenue", "Ave", "Way", "Close", "Drive", "Dr", "Place", "Pl", "Square", "Sq",
        "Crescent", "Terrace", "Gardens", "Row", "Court", "Hill", "Mews", "Walk", "Parade", "Grove", "Park", "Rise", "View",
        "Boulevard", "Strasse", "Straße", "Gasse", "Weg", "Quay", "Wharf", "Yard", "Green", "End", "Gate",
        "Cottages", "Cottage", "Villas", "Buildings", "Houses", "Flats", "Mansions", "Estate", "Common", "Passage", "Alley",
        "Embankment", "Circus", "Heights", "Meadow", "Meadows", "Fields", "Croft", "Chase", "Walk", "Hollow", "Bank", "Side",
    ]
    static let address = try! NSRegularExpression(pattern:
        #"\b\d{1,5}[a-zA-Z]?,? (?:[A-Z][\p{L}'-]+ ){0,4}(?:"# + streetWords.joined(separator: "|") + #")\b\.?(?:,? (?:[A-Z][\p{L}'-]+)(?: [A-Z][\p{L}'-]+)?)?(?: [A-Z0-9]{2,4} ?[0-9][A-Z]{2})?"#)
    /// A reference of capitals and digits: "KX-5512", "BR-7730", "TR 215", "F04", "#30412".
    static let code = try! NSRegularExpression(pattern: #"\b[A-Z]{1,5}[- ]?\d{2,}(?:[-/][A-Z0-9]+)*\b|#\d{3,}\b"#)
    /// "14:30", "9.15", "9 am", "9:30 p.m.", "noon".
    static let time = try! NSRegularExpression(pattern: #"\b(?:[01]?\d|2[0-3])[:.][0-5]\d(?: ?[ap]\.?m\.?)?|\b(?:1[0-2]|0?[1-9]) ?[ap]\.?m\.?|\bnoon\b|\bmidnight\b"#,
                                               options: [.caseInsensitive])

    static func matches(of expression: NSRegularExpression, in line: String) -> [String] {
        let range = NSRange(line.startIndex..., in: line)
        return expression.matches(in: line, range: range).compactMap { Range($0.range, in: line).map { String(line[$0]) } }
    }

    /// Seven to fifteen digits, and not a date ("2026-11-24") or a sum with decimals.
    static func isPhone(_ text: String) -> Bool {
        let digits = text.filter(\.isNumber).count
        guard (7...15).contains(digits) else { return false }
        let isoDate = try! NSRegularExpression(pattern: #"^\d{4}-\d{2}-\d{2}$"#)
        return isoDate.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil
    }

    /// The time of day written right after `date` in `line` ("19 November at 14:30", "Friday, 9 am"):
    /// a "when" answer keeps it.
    static func time(after date: String, in line: String) -> String? {
        guard let at = line.range(of: date) else { return nil }
        let rest = String(line[at.upperBound...].prefix(24))
        guard let found = matches(of: time, in: rest).first, let position = rest.range(of: found) else { return nil }
        let between = rest[..<position.lowerBound].trimmingCharacters(in: .whitespaces).lowercased()
        guard ["", ",", "at", ", at", "from", ", from", "@", "-", "–"].contains(between) else { return nil }
        return String(rest[..<position.upperBound])
    }
}

/// The engine's calculator: a small model picks the operands, the engine does the arithmetic
/// (the seed's "more built-in tools: calculator").
enum Calculator {
    /// `values` added, or the first minus the rest; formatted as the inputs are (decimals only
    /// when an input has them, thousands separated when an input was).
    static func apply(_ operation: RequestAnalysis.Operation, to values: [Double]) -> Double? {
        guard let first = values.first else { return nil }
        switch operation {
        case .sum: return values.reduce(0, +)
        case .difference: return values.count >= 2 ? abs(first - values.dropFirst().reduce(0, +)) : nil
        case .count: return Double(values.count)
        case .lowest: return values.min()
        case .highest: return values.max()
        default: return nil
        }
    }

    /// "1,275.50" → 1275.5; "€42" → 42; nil for anything else.
    static func number(_ text: String) -> Double? {
        let digits = text.filter { $0.isNumber || $0 == "." || $0 == "," || $0 == "-" }.replacingOccurrences(of: ",", with: "")
        return Double(digits)
    }

    /// `value` written like `examples`: "1,275.50", "42".
    static func format(_ value: Double, like examples: [String]) -> String {
        let decimals = examples.compactMap { example -> Int? in
            guard let dot = example.lastIndex(of: ".") else { return nil }
            return example[example.index(after: dot)...].prefix { $0.isNumber }.count
        }.max() ?? (value == value.rounded() ? 0 : 2)
        let grouped = examples.contains { $0.contains(",") } || abs(value) >= 10_000
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.numberStyle = .decimal
        formatter.usesGroupingSeparator = grouped
        formatter.groupingSeparator = ","
        formatter.decimalSeparator = "."
        formatter.minimumFractionDigits = decimals
        formatter.maximumFractionDigits = decimals
        return formatter.string(from: NSNumber(value: value)) ?? String(value)
    }
}
