/// The part of an OpenAI chat completion request Relay uses. The relay answers the last user
/// message; the earlier turns are already in the conversation's `Chats/NAME` file.
struct ChatCompletionRequest: Decodable {
    struct Message: Decodable {
        var role: String
        var content: String

        enum CodingKeys: String, CodingKey { case role, content }
        struct Part: Decodable { var type: String; var text: String? }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            role = try container.decode(String.self, forKey: .role)
            if let text = try? container.decode(String.self, forKey: .content) {
                content = text
            } else if let parts = try? container.decode([Part].self, forKey: .content) {
                content = parts.compactMap { $0.type == "text" ? $0.text : nil }.joined(separator: "\n")
            } else if try container.decodeNil(forKey: .content) {
                content = ""
            } else {
                throw DecodingError.typeMismatch(String.self, .init(codingPath: [CodingKeys.content], debugDescription: "content must be a string or a list of text parts"))
            }
        }
    }

    struct StreamOptions: Decodable { var include_usage: Bool? }

    var model: String?
    var messages: [Message]
    var stream: Bool?
    var stream_options: StreamOptions?
    /// Relay's extension: the `Chats/NAME` conversation (the `X-Relay-Chat` header says the same).
    var chat: String?

    /// The conversation a request belongs to when it names none: derived from its first user
    /// message, so every turn of one OpenAI conversation (which resends its history) lands in
    /// the same `Chats/openai-…` file.
    var derivedConversation: String {
        let first = messages.first { $0.role == "user" }?.content ?? ""
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: a stable name, not a secret
        for byte in first.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return "openai-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
