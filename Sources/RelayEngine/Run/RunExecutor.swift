import Foundation
import LanguageModels
import Logging
import WorkspaceCore

/// The models a run may use: the workspace's, and others by name for agents with a `model`.
public struct ModelProvider: Sendable {
    /// Who answers, for the transcript ("openai-compatible SmolLM2-135M-Instruct at http://…").
    public var description: String
    public var make: @Sendable (_ agentModel: String?) throws -> any LanguageModel

    public init(description: String, make: @escaping @Sendable (_ agentModel: String?) throws -> any LanguageModel) {
        self.description = description
        self.make = make
    }

    /// One model for every agent (tests, the scripted model).
    public static func single(_ model: any LanguageModel) -> ModelProvider {
        ModelProvider(description: model.description) { _ in model }
    }
}

/// The journal of a run, indexed for serving recorded replies and results again.
struct RecordedRun {
    var requests: [String: JournalRecord] = [:]
    var responses: [String: JournalRecord] = [:]
    var tools: [String: JournalRecord] = [:]
    var effects: [String: JournalRecord] = [:]
    var intents: [String: JournalRecord] = [:]
    var steps: [Int: JournalRecord] = [:]
    var ended: JournalRecord?

    init(_ records: [JournalRecord] = []) {
        for record in records {
            switch record.type {
            case .request: if let key = record.key { requests[key] = record }
            case .response: if let key = record.key { responses[key] = record }
            case .tool: if let key = record.key { tools[key] = record }
            case .effect: if let key = record.key { effects[key] = record }
            case .step: if let step = record.step { steps[step] = record }
            case .finished: ended = record
            case .failed, .interrupted: ended = nil
            case .intent: if let key = record.key { intents[key] = record }
            case .note: break
            }
        }
    }

    var isEmpty: Bool { responses.isEmpty && effects.isEmpty }
}

/// What replay found: each model request compared with the recorded one, each file with the
/// recorded version.
public struct ReplayReport: Sendable, Equatable {
    public struct Check: Sendable, Equatable {
        public var what: String
        public var matches: Bool
        public var detail: String
    }

    public var requests: [Check] = []
    public var files: [Check] = []
    /// Where the replayed files are.
    public var folder: String = ""

    public var matches: Bool { requests.allSatisfy(\.matches) && files.allSatisfy(\.matches) }
}

/// Runs a relay: the agents in order, each in a fresh session with a focused prompt, their
/// tools, revisions (at most 3 a turn), the transcript and the declared outputs.
///
/// The run is a function of its manifest and the model's replies: every reply, tool result and
/// file change is journaled as it happens, and whatever the journal already holds is served from
/// it instead of being asked or done again. So a fresh run, a resumed one (the journal serves the
/// finished part, the model the rest) and a replay (the journal serves everything, files go to a
/// scratch folder and are compared) are the same code.
final class RunExecutor: @unchecked Sendable {
    enum Mode { case live, replay }

    /// Tool rounds an agent may take before it must answer.
    static let maximumToolRounds = 3
    /// Revisions per turn, enforced here whatever the model asks.
    static let maximumRevisions = 3

    let manifest: RunManifest
    let workspace: Workspace
    let mode: Mode
    let recorded: RecordedRun
    let journal: RunJournalWriter?
    let models: ModelProvider?
    let emit: @Sendable (RelayEvent) -> Void
    /// For replay: the workspace whose object store holds the versions effects started from.
    let source: Workspace?
    let logger: Logger

    var cachedModels: [String: any LanguageModel] = [:]
    var report = ReplayReport()
    var messages: [AgentMessage] = []
    var filesWritten: [String] = []
    var revisionsUsed = 0
    /// A routed turn: the agents selected and why (agent id → "rule: keyword 'poem'").
    var selectedAgents: [AgentDefinition]?
    var selection: [String: String] = [:]
    /// In a plan relay: the turn's count of model calls against its cap, shared by its workers.
    var callBudget: CallBudget?
    /// Set on a worker's own executor: which subtask it does (workers never spawn workers).
    var worker: WorkerContext?
    /// Cuts made to a step's inputs before its prompt was built (a coordinator's worker results).
    var givenCuts: [String] = []
    /// Agents whose latest answer was chosen from the sources (a revision would choose the same).
    var chose: Set<String> = []

    init(manifest: RunManifest, workspace: Workspace, mode: Mode, recorded: RecordedRun, journal: RunJournalWriter?,
         models: ModelProvider?, source: Workspace? = nil, logger: Logger, emit: @escaping @Sendable (RelayEvent) -> Void) {
        self.manifest = manifest
        self.workspace = workspace
        self.mode = mode
        self.recorded = recorded
        self.journal = journal
        self.models = models
        self.source = source
        self.logger = logger
        self.emit = emit
    }

    var agents: [AgentDefinition] { selectedAgents ?? manifest.runningAgents }

    // MARK: The relay

    /// Runs (or resumes, or replays) the whole relay.
    /// - throws: `LanguageModelError` when the model fails (the run stays resumable),
    ///   `CancellationError` when cancelled (resumable too), `RelayError` for a broken journal.
    func execute() async throws {
        lastConversationWrite = ContinuousClock.now
        emit(.runStarted(runID: manifest.id, relay: manifest.relay, request: manifest.shownRequest ?? manifest.request,
                         agents: agents.map(AgentInfo.init), resumed: !recorded.isEmpty))
        if let note = manifest.inputNote { emit(.note(note)) }
        if manifest.skipped {
            try journalLine("- \(manifest.localTime.replacingOccurrences(of: "-", with: ":")) \(manifest.relay): skipped \(manifest.triggerPath ?? "the input") — \(manifest.inputNote ?? "not text") (run \(manifest.id))")
            try record(JournalRecord(.finished), state: "done")
            emit(.final(runID: manifest.id, text: "", files: filesWritten))
            return
        }
        if let notice = manifest.mentionNotice {
            try finishWithNotice(notice)
            return
        }
        switch manifest.shape {
        case .plan:
            try await executePlan()
            return
        case .route:
            try await selectRoute()
        case .sequence:
            break
        }
        var queue: [QueuedStep] = []
        var previous: (name: String, text: String)?
        var outputs: [String: String] = [:]
        var step = 0
        for agent in agents {
            queue.append(QueuedStep(agent: agent, part: .relay(previous: previous)))
            while !queue.isEmpty {
                let next = queue.removeFirst()
                let (stepMessage, revisions, inputs) = try await runStep(step, agent: next.agent, part: next.part, requestedBy: next.requestedBy,
                                                                     revisionRequest: next.revisionRequest, outputs: outputs)
                var message = stepMessage
                if next.requestedBy == nil, !next.isGroundingRevision, let why = selection[next.agent.id] { message.selectedBy = why }
                // Promise 8: what the agent wrote is checked against what it was given.
                if let check = groundingCheck(of: message, agent: next.agent, inputs: inputs, step: step, alreadyRevised: next.isGroundingRevision) {
                    message.grounding = check.note
                    if let cleaned = check.cleaned { message.text = cleaned }
                    if check.revise, case .relay(let given) = next.part {
                            queue.insert(QueuedStep(agent: next.agent, part: .grounding(previous: given, own: message.text, unsupported: check.note.unsupported),
                                                requestedBy: Self.groundingChecker, revisionRequest: check.note.request, isGroundingRevision: true), at: 0)
                    }
                }
                messages.append(message)
                outputs[next.agent.id] = message.text
                if message.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, let handedOn = previous {
                    // Nothing to hand off: the next agent gets what this one got.
                    if !message.restored { emit(.note("\(next.agent.label) gave no answer; the next agent gets \(handedOn.name)'s output")) }
                } else {
                    previous = (next.requestedBy == nil && !next.isGroundingRevision ? next.agent.name : "\(next.agent.name) (revised)", message.text)
                }
                try writeConversation(after: step, finished: false)
                step += 1
                for revision in revisions {
                    guard let target = manifest.roster.first(where: { $0.id == revision.target }) else { continue }
                    queue.append(QueuedStep(agent: target, part: .revision(own: outputs[target.id] ?? "", requester: next.agent.name, request: revision.request,
                                                                           requesterOutput: message.text), requestedBy: next.agent, revisionRequest: revision.request))
                }
            }
        }
        try finishRun(after: step, outputs: outputs)
    }

    /// The end of every run: the chat and transcript in their final form, declared outputs,
    /// the agents' journal line, the `finished` record and the `final` event.
    func finishRun(after step: Int, outputs: [String: String]) throws {
        try writeConversation(after: step, finished: true)
        try writeDeclaredOutputs(outputs)
        let revised = messages.filter { $0.revisionRequestedBy != nil }.count
        let wrote = Set(filesWritten).subtracting([manifest.chatFile, manifest.transcriptFile]).sorted()
        let about = manifest.triggerPath.map { " on \($0)" } ?? ""
        try journalLine("- \(manifest.localTime.replacingOccurrences(of: "-", with: ":")) \(manifest.relay)\(about): \(messages.count) messages"
            + (revised > 0 ? ", \(revised) revision\(revised == 1 ? "" : "s")" : "")
            + " in \(manifest.chatFile)" + (wrote.isEmpty ? "" : "; wrote \(wrote.joined(separator: ", "))") + " (run \(manifest.id))")
        try record(JournalRecord(.finished), state: "done")
        emit(.final(runID: manifest.id, text: Self.answer(of: messages, agents: agents)?.text ?? "", files: Array(Set(filesWritten)).sorted()))
    }

    /// A step waiting its turn: an agent in order, a revision someone asked for, or a revision
    /// the grounding check asked for.
    struct QueuedStep {
        var agent: AgentDefinition
        var part: FocusedPrompt.Part
        var requestedBy: AgentDefinition? = nil
        var revisionRequest: String? = nil
        var isGroundingRevision = false
    }

    /// The turn's answer: the latest message of a working (not reviewing) agent — after its
    /// revisions, never a reviewer's verdict (unless only reviewers spoke). Without reviewers in
    /// the roster it is the last message, as in the seed's relay.
    static func answer(of messages: [AgentMessage], agents: [AgentDefinition]) -> AgentMessage? {
        let reviewers = Set(agents.filter(\.isReviewer).map(\.id))
        let spoken = messages.filter { !$0.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        return spoken.last { !reviewers.contains($0.agent.id) } ?? spoken.last ?? messages.last
    }

    struct Revision { var target: String; var request: String }

    /// One agent's fresh session: the focused prompt, tool rounds, the answer.
    func runStep(_ step: Int, agent: AgentDefinition, part: FocusedPrompt.Part, requestedBy: AgentDefinition?,
                         revisionRequest: String?, outputs: [String: String]) async throws -> (AgentMessage, [Revision], [String]) {
        if let extraction = agent.extract, extraction != .verdict, extraction != .answer || hasAnswerChoices(agent, part: part) {
            let message = try await runExtraction(step, agent: agent, kind: extraction, part: part, requestedBy: requestedBy, revisionRequest: revisionRequest)
            chose.insert(agent.id)
            return (message, [], [])
        }
        chose.remove(agent.id)
        let restored = recorded.steps[step] != nil
        let budget = agent.tokenBudget ?? manifest.contextTokens
        var tools = agent.allowedTools
        if agents.count < 2 { tools.removeAll { $0 == .requestRevision } }
        if agent.extract == .verdict { tools = [] }
        let prompt = FocusedPrompt.build(agent: agent, request: request(for: agent), context: manifest.context, part: part, budget: budget,
                                         toolCount: tools.count, extras: extras(for: agent))
        let info = AgentInfo(agent)
        let history = routeHistory(for: agent, room: budget - FocusedPrompt.replyTokens(for: agent, budget: budget)
                                   - FocusedPrompt.estimate(prompt.system) - FocusedPrompt.estimate(prompt.user))
        if !restored {
            if let worker {
                emit(.workerStarted(step: step, worker: worker.number, of: worker.count, agent: info, subtask: worker.subtask))
            } else {
                emit(.agentStarted(step: step, agent: info, revisionRequestedBy: requestedBy.map(AgentInfo.init), revisionRequest: revisionRequest))
            }
            for cut in prompt.cuts + history.cuts { emit(.note("\(agent.label): \(cut) (token budget \(budget))")) }
        }
        var replyTokens = FocusedPrompt.replyTokens(for: agent, budget: budget)
        if let document = manifest.document, agent.output?.mode == .write, agent.maxTokens == nil {
            // A summary is at most half of what it summarises (a token is ~4 bytes, estimates count 3).
            replyTokens = min(replyTokens, max(96, FocusedPrompt.estimate(document) / 3))
        }
        // Revisions go to agents that have spoken in this turn, other than this one.
        let names = AgentToolbox.Names(agents: agents.filter { $0.id != agent.id && outputs[$0.id] != nil }.map(\.name),
                                       files: manifest.files, folders: manifest.folders)
        var conversation: [ChatMessage] = [.system(prompt.system)] + history.messages + [.user(prompt.user)]
        var inputs = prompt.sources + history.messages.map(\.content)
        var seenCalls: Set<String> = []
        var uses: [AgentMessage.ToolUse] = []
        var revisions: [Revision] = []
        var promptTokens = 0, completionTokens = 0, milliseconds = 0, calls = 0
        var started: String?
        var text = ""
        var repeated = false
        for call in 0...Self.maximumToolRounds {
            let used = conversation.reduce(0) { $0 + FocusedPrompt.estimate($1.content) + $1.toolCalls.reduce(0) { $0 + FocusedPrompt.estimate($1.arguments) } }
            let roomLeft = budget - replyTokens - used
            // After an accepted revision request, or a call repeated word for word, the agent answers now.
            let offer = call < Self.maximumToolRounds && !tools.isEmpty && roomLeft > 300 && revisions.isEmpty && !repeated
            var options = ModelOptions(maxTokens: replyTokens)
            if agent.extract == .verdict {
                // Extractions are chosen from the sources: asking for one again gives the same choice.
                let revisable = agents.filter { $0.id != agent.id && outputs[$0.id] != nil && !chose.contains($0.id) }.map(\.name)
                let reviewed: (name: String, text: String)? = if case .relay(let previous) = part { previous } else { nil }
                let checks = verdictChecks(reviewing: reviewed, sources: prompt.sources)
                options.responseSchema = ResponseSchema(name: "verdict", schema: Self.verdictSchema(revisable: revisable, checks: checks))
                options.maxTokens = min(replyTokens, 160)
            }
            let request = ModelRequest(messages: conversation, tools: offer ? tools.map { AgentToolbox.definition($0, names: names) } : [], options: options)
            let key = "\(step)/\(call)"
            let answer = try await modelCall(key, step: step, agent: agent, request: request, quiet: restored, streams: agent.extract != .verdict && worker == nil)
            calls += 1
            started = started ?? answer.started
            milliseconds += answer.milliseconds
            promptTokens += answer.reply.usage?.promptTokens ?? 0
            completionTokens += answer.reply.usage?.completionTokens ?? 0
            guard offer, !answer.reply.toolCalls.isEmpty else {
                text = answer.reply.text
                if agent.extract == .verdict {
                    text = Self.renderVerdict(text)
                    if !restored, mode == .live { emit(.textDelta(step: step, agentID: agent.id, text: text)) }
                }
                break
            }
            conversation.append(.assistant(answer.reply.text, toolCalls: answer.reply.toolCalls))
            let limit = min(12_000, max(400, (roomLeft - 200) * 3))
            for (index, toolCall) in answer.reply.toolCalls.enumerated() {
                if !restored { emit(.toolCall(step: step, agentID: agent.id, name: toolCall.name, arguments: toolCall.arguments)) }
                let signature = toolCall.name + " " + (toolCall.parsedArguments?.jsonText ?? toolCall.arguments)
                let outcome: ToolAnswer
                if seenCalls.contains(signature), toolCall.name != AgentTool.requestRevision.rawValue {
                    // A small model re-reading the same file: no second read, no further round.
                    outcome = ToolAnswer(outcome: ToolOutcome(result: "You already called \(toolCall.name) with these arguments; the result is above. Answer now.", isError: true), milliseconds: 0)
                    repeated = true
                } else {
                    outcome = try toolResult("\(key)/\(index)", step: step, agent: agent, call: toolCall, allowed: tools,
                                             limit: limit, revisions: &revisions, outputs: outputs, quiet: restored)
                    if !outcome.outcome.isError { inputs.append(outcome.outcome.result) }
                }
                seenCalls.insert(signature)
                milliseconds += outcome.milliseconds
                if !restored {
                    emit(.toolResult(step: step, agentID: agent.id, name: toolCall.name, result: outcome.outcome.result, isError: outcome.outcome.isError))
                }
                conversation.append(.toolResult(id: toolCall.id, outcome.outcome.result))
                uses.append(.init(name: toolCall.name, arguments: toolCall.arguments, result: outcome.outcome.result, isError: outcome.outcome.isError))
            }
        }
        // A model that cannot call tools may still ask in words: "REVISION for Wren: …".
        if revisions.isEmpty, agent.allowedTools.contains(.requestRevision), agents.count > 1, let (target, ask) = Self.writtenRevision(in: text) {
            let decision = decideRevision(target: target, request: ask, by: agent, outputs: outputs)
            if let accepted = decision.accepted { revisions.append(accepted) }
            if !restored {
                emit(.revisionRequested(step: step, by: info, target: target, request: ask, accepted: decision.accepted != nil, reason: decision.reason))
            }
        }
        var message = AgentMessage(
            step: step, agent: info, text: text, revisionRequestedBy: requestedBy?.name, revisionRequest: revisionRequest, toolCalls: uses,
            promptTokens: promptTokens, completionTokens: completionTokens, modelCalls: calls, milliseconds: milliseconds,
            started: started ?? manifest.created, cuts: givenCuts + prompt.cuts + history.cuts, restored: restored)
        message.worker = worker?.number
        message.subtask = worker?.subtask
        try finishStep(message, agent: agent)
        return (message, revisions, inputs)
    }

    /// Journals a finished step (live runs) and tells the listeners.
    func finishStep(_ message: AgentMessage, agent: AgentDefinition) throws {
        if !message.restored, mode == .live {
            var stepRecord = JournalRecord(.step)
            stepRecord.step = message.step
            stepRecord.agent = agent.id
            stepRecord.started = message.started
            stepRecord.milliseconds = message.milliseconds
            stepRecord.usage = TokenUsage(promptTokens: message.promptTokens, completionTokens: message.completionTokens)
            stepRecord.message = message.revisionRequest.map { "revision requested by \(message.revisionRequestedBy ?? "?"): \($0)" }
            try journal?.append(stepRecord, sync: false)
        }
        emit(.agentFinished(message))
    }

    // MARK: Model calls

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

        let model = try model(for: agent)
        let started = Self.timestamp()
        let clock = ContinuousClock.now
        var reply = ModelReply()
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
                    break
                }
            }
        }
        try Task.checkCancellation()
        let elapsed = ContinuousClock.now - clock
        let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
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

    private func model(for agent: AgentDefinition) throws -> any LanguageModel {
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
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    // MARK: Tools

    private struct ToolAnswer { var outcome: ToolOutcome; var milliseconds: Int }

    private func toolResult(_ key: String, step: Int, agent: AgentDefinition, call: ToolCall, allowed: [AgentTool], limit: Int,
                            revisions: inout [Revision], outputs: [String: String], quiet: Bool) throws -> ToolAnswer {
        let recordedTool = recorded.tools[key]
        let tool = AgentTool(rawValue: call.name)
        let arguments = call.parsedArguments
        var outcome: ToolOutcome
        var milliseconds = recordedTool?.milliseconds ?? 0
        if let worker, Self.spawns(call.name) {
            // Issue 19: a worker that tries to plan, delegate or have another agent run is refused.
            let refusal = worker.spawnRefusal(agent: agent, tool: call.name)
            outcome = .failure(refusal.message)
            if !quiet { emit(.refused(step: step, agent: AgentInfo(agent), error: refusal)) }
        } else if tool == nil || !allowed.contains(tool!) {
            let may = allowed.map(\.rawValue).joined(separator: ", ")
            outcome = .failure(tool == nil ? "there is no tool named '\(call.name)' (yours: \(may.isEmpty ? "none" : may))"
                               : "\(agent.name) may not use \(call.name) (allowed: \(may.isEmpty ? "no tools" : may))")
        } else if arguments?.objectValue == nil {
            outcome = .failure("the arguments of \(call.name) are not a JSON object: \(call.arguments.prefix(200))")
        } else if tool == .requestRevision {
            let target = arguments?["targetAgentName"]?.stringValue ?? ""
            let ask = arguments?["revisionRequest"]?.stringValue ?? ""
            if target.isEmpty || ask.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                outcome = .failure("request_revision needs \"targetAgentName\" and \"revisionRequest\", both non-empty strings")
            } else {
                let wanted = target.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
                let already = revisions.first { revision in agents.contains { $0.id == revision.target && ($0.name.lowercased() == wanted || $0.id.lowercased() == wanted) } }
                let decision = already != nil
                    ? (accepted: nil, reason: "already requested: \(target) will revise once, after you finish; add to your answer instead")
                    : decideRevision(target: target, request: ask, by: agent, outputs: outputs)
                if let accepted = decision.accepted { revisions.append(accepted) }
                if !quiet {
                    emit(.revisionRequested(step: step, by: AgentInfo(agent), target: target, request: ask, accepted: decision.accepted != nil, reason: decision.reason))
                }
                outcome = decision.accepted != nil
                    ? ToolOutcome(result: "Revision requested from \(target): they will run again after you finish.", isError: false)
                    : .failure(decision.reason ?? "refused")
            }
        } else if let recordedTool, mode == .live || AgentToolbox.isReadOnly(call.name) {
            // Done before the interruption (or, on replay, a read the recording answers).
            outcome = ToolOutcome(result: recordedTool.result ?? "", isError: recordedTool.isError ?? false)
            if let path = recordedTool.path, recordedTool.mode != nil { filesWritten.append(path) }
            return ToolAnswer(outcome: outcome, milliseconds: milliseconds)
        } else {
            if mode == .replay, let recordedTool, let path = recordedTool.path { try seed(path, before: recordedTool.before, mode: recordedTool.mode) }
            let clock = ContinuousClock.now
            let appendPath = tool == .appendFile ? arguments?["path"]?.stringValue : nil
            let appendBytes = AgentToolbox.appendBytes(arguments?["text"]?.stringValue ?? "")
            if mode == .live, let appendPath, let made = appendAlreadyMade(key, path: appendPath, bytes: appendBytes) {
                // Appended before a crash that came before its record: not again.
                outcome = ToolOutcome(result: "added \(appendBytes.count) bytes to \(made)", isError: false,
                                      effects: [FileEffect(path: made, mode: .append, before: nil, after: ContentHash(of: appendBytes).hex)])
            } else {
                if mode == .live, let appendPath { try recordIntent(key, path: appendPath) }
                outcome = AgentToolbox(workspace: workspace).run(tool!, arguments: arguments!, limit: limit)
            }
            let elapsed = ContinuousClock.now - clock
            if mode == .live { milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) }
            if mode == .replay {
                if let recordedTool, let effect = outcome.effects.first {
                    check(effect, against: recordedTool, what: effect.path, by: "\(call.name) in step \(step)")
                }
                // Replay reproduces the model's view exactly as recorded.
                if let recordedTool { outcome = ToolOutcome(result: recordedTool.result ?? "", isError: recordedTool.isError ?? false, effects: outcome.effects) }
            }
        }
        filesWritten += outcome.effects.map(\.path)
        if mode == .live, recordedTool == nil {
            var toolRecord = JournalRecord(.tool)
            toolRecord.key = key
            toolRecord.step = step
            toolRecord.agent = agent.id
            toolRecord.tool = call.name
            toolRecord.result = outcome.result
            toolRecord.isError = outcome.isError
            toolRecord.milliseconds = milliseconds
            if let effect = outcome.effects.first {
                toolRecord.path = effect.path
                toolRecord.mode = effect.mode.rawValue
                toolRecord.before = effect.before
                toolRecord.after = effect.after
            }
            try journal?.append(toolRecord)
        }
        return ToolAnswer(outcome: outcome, milliseconds: milliseconds)
    }

    /// The engine's rules for revisions: a known agent other than the asker that has spoken in
    /// this turn, and at most ``maximumRevisions`` a turn.
    private func decideRevision(target: String, request: String, by agent: AgentDefinition, outputs: [String: String]) -> (accepted: Revision?, reason: String?) {
        let wanted = target.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard let found = agents.first(where: { $0.name.lowercased() == wanted || $0.id.lowercased() == wanted }) else {
            return (nil, "refused: there is no agent named '\(target)' (agents: \(agents.map(\.name).joined(separator: ", ")))")
        }
        guard found.id != agent.id else { return (nil, "refused: \(agent.name) cannot ask for a revision of their own work; answer with the corrected text instead") }
        guard outputs[found.id] != nil else { return (nil, "refused: \(found.name) has not spoken yet in this turn") }
        guard revisionsUsed < Self.maximumRevisions else {
            return (nil, "refused: the relay allows \(Self.maximumRevisions) revisions per turn and \(revisionsUsed) have been requested; finish with your own answer")
        }
        revisionsUsed += 1
        return (Revision(target: found.id, request: request), nil)
    }

    /// "REVISION for Wren: the second paragraph repeats the first." anywhere in a reply.
    static func writtenRevision(in text: String) -> (String, String)? {
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: CharacterSet(charactersIn: " *_>-`"))
            guard trimmed.lowercased().hasPrefix("revision for ") else { continue }
            let rest = trimmed.dropFirst("revision for ".count)
            guard let colon = rest.firstIndex(of: ":") else { continue }
            let name = rest[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: " *_`"))
            let ask = rest[rest.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty, !ask.isEmpty, !name.contains(" ") { return (name, ask) }
        }
        return nil
    }

    // MARK: Files

    /// The chat file and transcript are rewritten after an agent finishes when the last
    /// rewrite is at least this old (so a person watching sees each answer arrive with a real
    /// model, while a fast model's run writes them once, at the end).
    static let conversationInterval = Duration.milliseconds(250)
    private lazy var lastConversationWrite = ContinuousClock.now

    func writeConversation(after step: Int, finished: Bool) throws {
        let suffix = finished ? "final" : String(step)
        if !finished {
            switch mode {
            case .replay:
                // Do what the recorded run did.
                guard recorded.effects["transcript/\(suffix)"] != nil || recorded.effects["chat/\(suffix)"] != nil else { return }
            case .live:
                guard recorded.effects["transcript/\(suffix)"] == nil else { break }
                guard ContinuousClock.now - lastConversationWrite >= Self.conversationInterval else { return }
            }
        }
        defer { lastConversationWrite = ContinuousClock.now }
        let messages = self.messages, manifest = self.manifest
        try effect("transcript/\(suffix)", path: manifest.transcriptFile, mode: .update) { old in
            Conversation.updatingTranscript(old, manifest: manifest, messages: messages)
        }
        try effect("chat/\(suffix)", path: manifest.chatFile, mode: .update) { old in
            Conversation.updatingChat(old, manifest: manifest, messages: messages, finished: finished)
        }
    }

    func writeDeclaredOutputs(_ outputs: [String: String]) throws {
        var values = manifest.placeholderValues
        // What a knowledge line links to: the file another agent of the run writes (the
        // summary), else the file that started the run.
        let written = agents.compactMap { agent -> String? in
            guard let output = agent.output, output.mode == .write, outputs[agent.id] != nil else { return nil }
            var values = manifest.placeholderValues
            values["agent"] = agent.id
            return output.resolvedPath(values)
        }
        for agent in agents {
            guard let output = agent.output, let text = outputs[agent.id] else { continue }
            values["agent"] = agent.id
            let path = output.resolvedPath(values)
            switch output.mode {
            case .write:
                var bytes = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
                bytes.append(0x0A)
                try effect("output/\(agent.id)", path: path, mode: .write) { _ in bytes }
            case .append:
                let entry = "\n## \(manifest.localTime.replacingOccurrences(of: "-", with: ":")) · \(agent.label) · \(manifest.relay) (run \(manifest.id))\n\n"
                    + text.trimmingCharacters(in: .whitespacesAndNewlines) + "\n"
                try effect("output/\(agent.id)", path: path, mode: .append) { _ in Array(entry.utf8) }
            case .context:
                guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, !text.hasPrefix("Not found:") else { continue }
                try addKnowledge(text, heading: output.path, link: written.first ?? manifest.triggerPath ?? manifest.chatFile, agent: agent)
            }
        }
    }

    /// context.md's size budget in bytes: about half the window (at four bytes a token). Each
    /// prompt gets what fits of it; search reaches all of it.
    static func contextBudget(_ contextTokens: Int) -> Int { contextTokens * 2 }

    /// A knowledge line in context.md through the coordinated update (a person's edit made
    /// meanwhile is kept); the oldest lines past the budget go to `Research/index.md`, after it.
    private func addKnowledge(_ text: String, heading: String, link: String, agent: AgentDefinition) throws {
        let line = KnowledgeSection.line(name: manifest.name, link: link, text: text)
        let budget = Self.contextBudget(manifest.contextTokens)
        let moved = MovedLines()
        try effect("output/\(agent.id)", path: "context.md", mode: .update, detail: { moved.lines.joined(separator: "\n") }) { old in
            let current = String(decoding: old ?? [], as: UTF8.self)
            let moving = KnowledgeSection.overflow(adding: line, to: current, heading: heading, budget: budget)
            moved.lines = moving
            return Array(KnowledgeSection.adding(line, to: current, heading: heading, removing: Set(moving)).utf8)
        }
        // Resumed after the update: the journal says what it moved.
        if moved.lines.isEmpty, let recordedDetail = recorded.effects["output/\(agent.id)"]?.message, !recordedDetail.isEmpty {
            moved.lines = recordedDetail.components(separatedBy: "\n")
        }
        guard !moved.lines.isEmpty else { return }
        let index = "Research/index.md"
        let header = (try? workspace.resolve(index).exists) == true ? "" : "# Research index\n\nOlder entries moved here from context.md to keep it within its size budget.\n\n"
        try effect("index/\(agent.id)", path: index, mode: .append) { _ in Array((header + moved.lines.joined(separator: "\n") + "\n").utf8) }
    }

    private final class MovedLines: @unchecked Sendable { var lines: [String] = [] }

    /// A line in the agents' journal, `Journal/agent/{date}.md`.
    func journalLine(_ line: String) throws {
        try effect("journal", path: "Journal/agent/\(manifest.localDate).md", mode: .append) { _ in Array((line + "\n").utf8) }
    }

    /// Changes a file once per key: done now unless the journal says it was done before the
    /// interruption; on replay, done in the scratch folder from the recorded starting version
    /// and compared with the recorded result.
    func effect(_ key: String, path: String, mode effectMode: FileEffect.Mode, detail: (() -> String?)? = nil,
                        _ transform: @escaping ([UInt8]?) -> [UInt8]) throws {
        let done = recorded.effects[key]
        if mode == .live, done != nil { filesWritten.append(path); return }
        if mode == .replay {
            guard let done else {
                report.files.append(.init(what: path, matches: false, detail: "the replay wrote \(path) (\(key)) and the recording did not"))
                return
            }
            try seed(path, before: done.before, mode: done.mode)
        }
        let result: FileEffect
        do {
            switch effectMode {
            case .write:
                let written = try workspace.write(path, bytes: transform(nil), operation: "relay")
                result = FileEffect(path: written.path, mode: .write, before: written.replaced?.hex, after: written.hash.hex)
            case .update:
                let written = try workspace.update(path, operation: "relay", transform)
                result = FileEffect(path: written.path, mode: .update, before: written.replaced?.hex, after: written.hash.hex)
            case .append:
                let bytes = transform(nil)
                if mode == .live, let made = appendAlreadyMade(key, path: path, bytes: bytes) {
                    result = FileEffect(path: made, mode: .append, before: nil, after: ContentHash(of: bytes).hex)
                } else {
                    if mode == .live { try recordIntent(key, path: path) }
                    let appended = try workspace.append(path, bytes: bytes, wholeLines: false)
                    result = FileEffect(path: appended.path, mode: .append, before: nil, after: ContentHash(of: bytes).hex)
                }
            }
        } catch let error as WorkspaceError {
            // A declared output into a refused path is the roster's fault, not the run's.
            if key.hasPrefix("output/") {
                emit(.note("could not write the declared output \(path): \(error.message)"))
                return
            }
            throw error
        }
        filesWritten.append(result.path)
        if mode == .replay, let done {
            check(result, against: done, what: path)
            return
        }
        var effectRecord = JournalRecord(.effect)
        effectRecord.key = key
        effectRecord.path = result.path
        effectRecord.mode = result.mode.rawValue
        effectRecord.before = result.before
        effectRecord.after = result.after
        effectRecord.message = detail?()
        try journal?.append(effectRecord)
    }

    /// Records, before an append, the size the file has: if the run dies after the append and
    /// before the append's own record, resume finds the bytes instead of appending them twice.
    private func recordIntent(_ key: String, path: String) throws {
        guard let resolved = try? workspace.resolve(path) else { return }  // the append itself says why
        var intent = JournalRecord(.intent)
        intent.key = key
        intent.path = resolved.relative
        intent.offset = workspace.stamp(ofFileAt: resolved.relative)?.size ?? 0
        try journal?.append(intent)
    }

    /// The path, if an append recorded as intended before an interruption is already in the
    /// file: `bytes` at or after the size the file had then.
    private func appendAlreadyMade(_ key: String, path: String, bytes: [UInt8]) -> String? {
        guard let intent = recorded.intents[key], let offset = intent.offset, let relative = intent.path, !bytes.isEmpty,
              let content = try? workspace.read(relative), content.count >= offset + bytes.count else { return nil }
        return content[offset...].firstRange(of: bytes) != nil ? relative : nil
    }

    private func check(_ effect: FileEffect, against recorded: JournalRecord, what: String, by: String? = nil) {
        let same = effect.after == recorded.after
        let detail = same ? (effect.mode == .append ? "same bytes appended" : "byte for byte")
            : "replay gave \(effect.after.prefix(12)), the recording \(recorded.after?.prefix(12) ?? "nothing")"
        report.files.append(.init(what: what, matches: same, detail: by.map { "\($0): \(detail)" } ?? detail))
    }

    /// Puts the version an effect started from into the replay folder.
    private func seed(_ path: String, before: String?, mode effectMode: String?) throws {
        guard effectMode != FileEffect.Mode.append.rawValue else { return }
        let target = try workspace.resolve(path)
        guard let before else {
            if target.exists { _ = try workspace.remove(path, operation: "replay") }
            return
        }
        if target.exists, (try? workspace.hash(path).hex) == before { return }
        guard let source, let hash = ContentHash(hex: before), let bytes = try? source.objects.load(hash) else {
            report.files.append(.init(what: path, matches: false, detail: "the version \(before.prefix(12)) it started from is not in the object store"))
            return
        }
        try workspace.write(path, bytes: bytes, operation: "replay")
    }

    func record(_ record: JournalRecord, state: String) throws {
        guard mode == .live, recorded.ended == nil else { return }
        var record = record
        record.state = state
        record.started = Self.timestamp()
        try journal?.append(record)
    }
}
