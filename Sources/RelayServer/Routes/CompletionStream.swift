import Foundation
import Hummingbird
import NIOCore
import RelayEngine

/// One streamed chat completion: `chat.completion.chunk` objects as SSE, then `data: [DONE]`.
/// The run goes on to its end even when the client goes away (a stalled or closed client never
/// stops a run); only a shutdown interrupts it, leaving it resumable.
struct CompletionStream: Sendable {
    let turns: RelayTurns
    let manifest: RunManifest
    let model: String
    let includeUsage: Bool

    func write(to writer: inout any ResponseBodyWriter) async throws {
        let id = "chatcmpl-\(manifest.id)"
        let created = Int(Date().timeIntervalSince1970)
        func chunk(_ delta: [String: Any], finish: String?) -> ByteBuffer {
            Self.event(["id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                        "choices": [["index": 0, "delta": delta, "finish_reason": finish.map { $0 as Any } ?? NSNull()]]])
        }
        let (events, continuation) = AsyncStream.makeStream(of: RelayEvent.self)
        let turns = self.turns, manifest = self.manifest
        let run = Task { () throws -> TurnOutcome in
            defer { continuation.finish() }
            return try await turns.run(manifest) { continuation.yield($0) }
        }
        var clientGone = false
        func send(_ buffer: ByteBuffer, _ writer: inout any ResponseBodyWriter) async {
            guard !clientGone else { return }
            do { try await writer.write(buffer) } catch { clientGone = true }
        }
        await send(chunk(["role": "assistant", "content": ""], finish: nil), &writer)
        for await event in events {
            switch event {
            case .agentStarted(_, let agent, _, _):
                await send(Self.comment("\(agent.label) is working"), &writer)
            case .agentFinished(let message):
                await send(Self.comment("\(message.agent.label) finished"), &writer)
            default:
                break
            }
        }
        do {
            let outcome = try await run.value
            await send(chunk(["content": outcome.answer], finish: nil), &writer)
            await send(chunk([:], finish: "stop"), &writer)
            if includeUsage {
                await send(Self.event(["id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                                       "choices": [] as [Any], "usage": OpenAIRoutes.usage(outcome)]), &writer)
            }
        } catch let error as APIError {
            await send(Self.event(error.body), &writer)
        } catch {
            await send(Self.event(APIError(.internalError, "\(error)").body), &writer)
        }
        await send(ByteBuffer(string: "data: [DONE]\n\n"), &writer)
        if !clientGone { try await writer.finish(nil) }
    }

    static func event(_ object: Any) -> ByteBuffer {
        var buffer = ByteBuffer(string: "data: ")
        buffer.writeBytes(JSONBody.data(object))
        buffer.writeString("\n\n")
        return buffer
    }

    static func comment(_ text: String) -> ByteBuffer {
        ByteBuffer(string: ": " + text.replacingOccurrences(of: "\n", with: " ") + "\n\n")
    }
}
