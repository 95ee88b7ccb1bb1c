import Foundation

/// A model that replies from a script instead of a server — for tests and offline demos, and
/// named "scripted model" in its ``description`` so nothing it wrote passes for a real model's
/// work.
///
/// Replies are given in order, one per request. A reply with `"when"` is only given to a request
/// whose last user message contains that text; the first unused reply that fits is taken. With
/// `"repeat": true` the script starts over when every reply is used; otherwise a request past
/// the end is an error. Usage is the script's, or estimated at 4 characters a token.
///
/// The file:
/// ```json
/// {
///   "replies": [
///     {"toolCalls": [{"name": "read_file", "arguments": {"path": "context.md"}}]},
///     {"when": "llama", "text": "Llamas are camelids."},
///     {"text": "Done.", "usage": {"promptTokens": 12, "completionTokens": 2}}
///   ]
/// }
/// ```
///
/// For example:
/// ```swift
/// let model = try ScriptedModel(contentsOf: "Tests/fixtures/llamas.json")
/// let reply = try await model.complete(ModelRequest(messages: [.user("Tell me about llamas")]))
/// ```
public final class ScriptedModel: LanguageModel, @unchecked Sendable {
    public struct Script: Codable, Sendable, Equatable {
        public var replies: [Reply]
        public var `repeat`: Bool?

        public init(replies: [Reply], repeat: Bool? = nil) {
            self.replies = replies
            self.repeat = `repeat`
        }
    }

    public struct Reply: Codable, Sendable, Equatable {
        public var when: String?
        public var text: String?
        public var toolCalls: [ScriptedToolCall]?
        public var usage: TokenUsage?

        public init(when: String? = nil, text: String? = nil, toolCalls: [ScriptedToolCall]? = nil, usage: TokenUsage? = nil) {
            self.when = when
            self.text = text
            self.toolCalls = toolCalls
            self.usage = usage
        }
    }

    public struct ScriptedToolCall: Codable, Sendable, Equatable {
        public var name: String
        public var arguments: JSONValue?

        public init(name: String, arguments: JSONValue? = nil) {
            self.name = name
            self.arguments = arguments
        }
    }

    public let script: Script
    /// Where the script came from ("inline" when built in code).
    public let source: String
    private let lock = NSLock()
    private var used: Set<Int> = []
    private var requests: [ModelRequest] = []

    public init(script: Script, source: String = "inline") {
        self.script = script
        self.source = source
    }

    /// Reads a script file.
    /// - throws: ``LanguageModelError/Code/script`` naming the file and, for bad JSON, the field.
    public convenience init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LanguageModelError(.script, "no scripted model file at \(path) — set \"script\" in relay.json's \"model\" section to an existing file", url: path)
        }
        do {
            self.init(script: try JSONDecoder().decode(Script.self, from: data), source: path)
        } catch let error as DecodingError {
            throw LanguageModelError(.script, "scripted model file \(path) is not a valid script: \(describe(error))", url: path, underlying: error)
        }
    }

    public var description: String { "scripted model (\(source))" }

    /// The requests the model was asked, in order — what a test checks was sent.
    public var receivedRequests: [ModelRequest] { lock.withLock { requests } }

    public func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        let picked: Result<Reply, LanguageModelError> = lock.withLock {
            requests.append(request)
            let lastUser = request.messages.last(where: { $0.role == .user })?.content ?? ""
            func pick() -> Int? {
                script.replies.indices.first { !used.contains($0) && (script.replies[$0].when.map { lastUser.contains($0) } ?? true) }
            }
            var index = pick()
            if index == nil, script.repeat == true, !used.isEmpty {
                used.removeAll()
                index = pick()
            }
            guard let index else {
                return .failure(LanguageModelError(
                    .script, "scripted model (\(source)) has no reply left for \"\(lastUser.prefix(60))\": its \(script.replies.count) replies are used or do not match",
                    url: source))
            }
            used.insert(index)
            return .success(script.replies[index])
        }
        return AsyncThrowingStream { continuation in
            switch picked {
            case .failure(let error):
                continuation.finish(throwing: error)
            case .success(let reply):
                let text = reply.text ?? ""
                for piece in Self.pieces(of: text) { continuation.yield(.text(piece)) }
                let calls = reply.toolCalls ?? []
                for (position, call) in calls.enumerated() {
                    continuation.yield(.toolCall(ToolCall(id: "call_\(position)", name: call.name, arguments: (call.arguments ?? [:]).jsonText)))
                }
                let promptCharacters = request.messages.reduce(0) { $0 + $1.content.count }
                continuation.yield(.usage(reply.usage ?? TokenUsage(
                    promptTokens: max(1, (promptCharacters + 3) / 4), completionTokens: max(1, (text.count + 3) / 4))))
                continuation.yield(.finished(calls.isEmpty ? .stop : .toolCalls))
                continuation.finish()
            }
        }
    }

    /// Splits text into word-sized deltas, spaces kept, so consumers see a stream.
    static func pieces(of text: String) -> [String] {
        var pieces: [String] = []
        var current = ""
        for character in text {
            current.append(character)
            if character == " " || character == "\n" {
                pieces.append(current)
                current = ""
            }
        }
        if !current.isEmpty { pieces.append(current) }
        return pieces
    }
}

/// A `DecodingError` as "field: problem".
func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return keys.isEmpty ? "" : String(keys.drop(while: { $0 == "." })) + ": "
    }
    switch error {
    case .keyNotFound(let key, let context): return path(context) + "missing field \"\(key.stringValue)\""
    case .typeMismatch(let type, let context): return path(context) + "expected \(type)"
    case .valueNotFound(let type, let context): return path(context) + "expected \(type), found null"
    case .dataCorrupted(let context):
        let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
        return path(context) + (underlying ?? context.debugDescription)
    @unknown default: return "\(error)"
    }
}
