import Foundation

/// What a request asks the relay to do, decided before any agent runs: each kind has one
/// answering program (`Answering/Programs/`), so a to-do list is not answered as if it were a
/// name, and a question the notes cannot answer is not answered with the nearest value.
public enum RequestKind: String, Sendable, Codable, CaseIterable {
    /// One value: a name, a date with its time, an amount, an email address…
    case lookup
    /// Every item that matches ("what is still on my to-do list").
    case list
    /// A verdict and the line that decides it ("did I pay the plumber?").
    case yesNo = "yes/no"
    /// Arithmetic on values of the notes: a sum, a difference, days between two dates.
    case compute
    /// The item with the most or least of something ("which quote is cheapest?").
    case compare
    /// A set of notes in a few lines ("summarise my week").
    case summarise
    /// New text grounded in the notes ("draft a message to Oskar").
    case draft
    /// Anything else; answered from the workspace when it speaks of it, otherwise labelled as
    /// the model's own answer.
    case other
}

/// What the engine made of a request: its kind, why, and what the kind's program needs (the
/// value asked for, the days it is about, the operation). Decided from the request's grammar
/// (``RequestRules``) once, when the run is prepared, and kept in `run.json`, so resume and
/// replay answer the same way.
public struct RequestAnalysis: Sendable, Codable, Equatable {
    public var kind: RequestKind
    /// Why, in words the group chat shows: "starts with “did”: a yes/no question".
    public var why: String
    /// For a lookup (and a two-hop lookup): the kind of value asked for.
    public var value: ValueKind?
    /// The days the request is about ("this week", "yesterday", "on Tuesday"), inclusive,
    /// as `yyyy-MM-dd`; nil when it names none.
    public var days: DayRange?
    /// For compute and compare: what to do with the values.
    public var operation: Operation?
    /// The request is about open tasks ("to-do", "what do I still need to do").
    public var tasks: Bool = false
    /// How many items the request asks for ("three bullets", "top 5"); nil when it does not say.
    public var count: Int?
    /// The words of what the request is about that no file of the workspace holds ("alarm",
    /// "password"), found when its evidence was: the notes cannot speak of them.
    public var unknown: [String]?
    /// The grammar could not tell the kind (no question word, auxiliary or known imperative
    /// opens the request): the model chooses it before the agents run (`KindChoice.swift`).
    public var undecided: Bool?

    public enum Operation: String, Sendable, Codable {
        case sum, difference, daysBetween = "days between", count
        case lowest, highest, earliest, latest
    }

    public struct DayRange: Sendable, Codable, Equatable {
        public var from: String
        public var to: String
        /// As the request said it: "this week".
        public var said: String

        func contains(_ day: String) -> Bool { day >= from && day <= to }
    }

    public init(kind: RequestKind, why: String, value: ValueKind? = nil) {
        self.kind = kind
        self.why = why
        self.value = value
    }

    /// The line the group chat and the transcript show before the agents speak.
    public var shown: String {
        var text = "Request kind: \(kind.rawValue) — \(why)"
        if let value, kind == .lookup { text += "; asks for \(value.described)" }
        if let days { text += "; days \(days.from == days.to ? days.from : "\(days.from) to \(days.to)") (\(days.said))" }
        if let operation { text += "; operation: \(operation.rawValue)" }
        return text
    }
}

/// The kind of value a lookup asks for: what the answer must be (the reviewer checks it is).
public enum ValueKind: String, Sendable, Codable, CaseIterable {
    case person, place, name, date, time, number, money, email, phone, address, url, code, reason, phrase

    var described: String {
        switch self {
        case .person: "a person"
        case .place: "a place"
        case .name: "a name"
        case .date: "a date"
        case .time: "a time"
        case .number: "a number"
        case .money: "an amount of money"
        case .email: "an email address"
        case .phone: "a phone number"
        case .address: "a street address"
        case .url: "a web address"
        case .code: "a reference code"
        case .reason: "a reason"
        case .phrase: "a short phrase"
        }
    }

    /// The answer kinds `AnswerEvidence` ranks values by (name, date, number or any).
    var asked: AnswerCandidates.Asked {
        switch self {
        case .person, .place, .name: .name
        case .date, .time: .date
        case .number, .money: .number
        case .reason: .reason
        case .email, .phone, .address, .url, .code, .phrase: .any
        }
    }

    /// Values that are spans of their own (`ValueSpans`), not claims.
    var isSpan: Bool { [.email, .phone, .address, .url, .code].contains(self) }
}
