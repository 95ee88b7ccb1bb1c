import Foundation
import LanguageModels
import Logging
import WorkspaceCore

// RunExecutor: the model calls of a step — served from the journal when it holds the reply,
// otherwise sent (streamed, under a schema when the agent chooses), journaled before and after.

extension RunExecutor {
    struct Answer { var reply: ModelReply; var started: String; var milliseconds: Int }

    /// - parameter quiet: the step is restored; `streams`: text deltas are shown as they come
    ///   (not for replies under a schema, which the caller renders).
    func modelCall(_ key: String, step: Int, agent: AgentDefinition, request: ModelRequest, quiet: Bool, streams: Bool = true) async throws -> Answer {
        try callBudget?.spend(step: step, agent: agent)
        let hash = Self.hash(request)
        if let response = recorded.responses[key] {
            if mode == .replay {
                let recordedHash = recorded.requests[key]?.requestHash
                report.requests.append(.init(
                    what: "step \(step) (\(agent.name)), model call \(key)", matches: recordedHash == hash,
                    detail: recordedHash == hash ? "same request" : Self.difference(recorded.requests[key]?.messages ?? [], request.messages)))
            }
            var reply = ModelReply()
            reply.text = response.text ?? ""
            reply.toolCalls = response.toolCalls ?? []
            reply.usage = response.usage
            reply.finishReason = response.finish.map(FinishReason.init(wireName:))
            if !quiet, streams, mode == .live, !reply.text.isEmpty { emit(.textDelta(step: step, agentID: agent.id, text: reply.text)) }
            return Answer(reply: reply, started: response.started ?? manifest.created, milliseconds: response.milliseconds ?? 0)
        }
        guard mode == .live, models != nil else {
            throw RelayError(.corruptRun, "run \(manifest.id): the journal has no reply for step \(step) (\(agent.name)), call \(key); it cannot be replayed past that point")
        }
        var requestRecord = JournalRecord(.request)
        requestRecord.key = key
        requestRecord.step = step
        requestRecord.agent = agent.id
        requestRecord.messages = request.messages
        requestRecord.tools = request.tools.map(\.name)
        requestRecord.toolDefinitions = request.tools.isEmpty ? nil : request.tools
        requestRecord.maxTokens = request.options.maxTokens
        requestRecord.requestHash = hash
        try journal?.append(requestRecord, sync: false)

        let model: any LanguageModel
        do {
            model = try self.model(for: agent)
        } catch let error as LanguageModelError {
            throw RelayError.model(error, agent: agent.label, model: agent.model.map { "\($0) on \(models!.description)" } ?? models!.description)
        }
        let started = Self.timestamp()
        let clock = ContinuousClock.now
        var reply = ModelReply()
        do {
            try await stream(model, request, into: &reply, step: step, agent: agent, streams: streams)
        } catch let error as LanguageModelError {
            // One error for whoever runs the engine (the CLI, the daemon, the server): it names
            // the agent and the model; the model's own error stays its cause.
            throw RelayError.model(error, agent: agent.label, model: model.description)
        }
        try Task.checkCancellation()
        let elapsed = ContinuousClock.now - clock
        let milliseconds = elapsed.milliseconds
        var responseRecord = JournalRecord(.response)
        responseRecord.key = key
        responseRecord.step = step
        responseRecord.agent = agent.id
        responseRecord.started = started
        responseRecord.milliseconds = milliseconds
        responseRecord.text = reply.text
        responseRecord.toolCalls = reply.toolCalls
        responseRecord.usage = reply.usage
        responseRecord.finish = reply.finishReason.map(Self.wireName)
        try journal?.append(responseRecord)
        return Answer(reply: reply, started: started, milliseconds: milliseconds)
    }

    /// Streams `model`'s reply to `request` into `reply`, showing text as it comes.
    private func stream(_ model: any LanguageModel, _ request: ModelRequest, into reply: inout ModelReply,
                        step: Int, agent: AgentDefinition, streams: Bool) async throws {
        var guardLoops = RepetitionGuard()
        for try await event in model.stream(request) {
            try Task.checkCancellation()
            reply.add(event)
            if case .text(let delta) = event {
                if streams { emit(.textDelta(step: step, agentID: agent.id, text: delta)) }
                if let kept = guardLoops.feed(delta) {
                    // A small model caught in a loop: stop it, keep the text up to the loop.
                    reply.text = kept
                    reply.finishReason = .other("repetition")
                    // The server counts tokens at the end of a reply, which was cut short: estimate them.
                    let prompt = request.messages.reduce(0) { $0 + $1.content.utf8.count } / 4 + 1
                    reply.usage = reply.usage ?? TokenUsage(promptTokens: prompt, completionTokens: kept.utf8.count / 4 + 1)
                    emit(.note("\(agent.label) was repeating itself; Relay stopped the reply at the loop"))
                    return
                }
            }
        }
    }

    func model(for agent: AgentDefinition) throws -> any LanguageModel {
        let name = agent.model ?? ""
        if let model = cachedModels[name] { return model }
        let model = try models!.make(agent.model)
        cachedModels[name] = model
        return model
    }

    static func wireName(_ reason: FinishReason) -> String {
        switch reason {
        case .stop: return "stop"
        case .length: return "length"
        case .toolCalls: return "tool_calls"
        case .other(let name): return name
        }
    }

    static func hash(_ request: ModelRequest) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // The schema only when there is one, so requests recorded before schemas hash as they did.
        struct Hashed: Encodable { var messages: [ChatMessage]; var tools: [ToolDefinition]; var maxTokens: Int?; var schema: JSONValue? }
        let data = (try? encoder.encode(Hashed(messages: request.messages, tools: request.tools, maxTokens: request.options.maxTokens,
                                               schema: request.options.responseSchema?.schema))) ?? Data()
        return ContentHash(of: Array(data)).hex
    }

    /// The first place two requests differ, for replay's report.
    static func difference(_ recorded: [ChatMessage], _ now: [ChatMessage]) -> String {
        for index in 0..<max(recorded.count, now.count) {
            guard index < recorded.count, index < now.count else { return "message \(index + 1) is only in the \(index < recorded.count ? "recording" : "replay")" }
            let a = recorded[index], b = now[index]
            if a == b { continue }
            let prefix = zip(a.content, b.content).prefix { $0 == $1 }.count
            let was = String(a.content.dropFirst(prefix).prefix(60)), isNow = String(b.content.dropFirst(prefix).prefix(60))
            return "\(b.role.rawValue) message \(index + 1) differs at character \(prefix): recorded \"\(was)\", now \"\(isNow)\""
        }
        return "tools or options differ"
    }

    static func timestamp(_ date: Date = Date()) -> String {
        Timestamp.iso8601Milliseconds(date)
    }
}
