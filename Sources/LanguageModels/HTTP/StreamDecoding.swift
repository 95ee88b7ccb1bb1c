import AsyncHTTPClient

/// Turns a provider's server-sent events into model events (OpenAI's chunks, Anthropic's
/// message events).
protocol StreamDecoding {
    var isDone: Bool { get }
    mutating func decode(_ event: ServerSentEvent) throws -> [ModelEvent]
}

extension ModelHTTPExchange {
    /// Feeds a streamed reply through the SSE parser and `decoder` into `continuation` until the
    /// decoder is done or the body ends; a transport failure mid-reply names the URL.
    func pump<Decoder: StreamDecoding>(_ response: HTTPClientResponse, into decoder: inout Decoder, url: String,
                                       _ continuation: AsyncThrowingStream<ModelEvent, any Error>.Continuation) async throws {
        var parser = ServerSentEventParser()
        do {
            for try await buffer in response.body {
                for event in parser.feed(buffer.readableBytesView) {
                    for modelEvent in try decoder.decode(event) { continuation.yield(modelEvent) }
                    if decoder.isDone { break }
                }
                if decoder.isDone { break }
            }
        } catch {
            throw mapTransportError(error, url: url, midReply: true)
        }
        if !decoder.isDone, let last = parser.finish() {
            for modelEvent in try decoder.decode(last) { continuation.yield(modelEvent) }
        }
    }
}

extension OpenAIStreamDecoder: StreamDecoding {}
extension AnthropicStreamDecoder: StreamDecoding {}
