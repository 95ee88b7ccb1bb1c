import Foundation
import LanguageModels
import Logging
import WorkspaceCore

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
    /// - throws: `RelayError` `.model` when the model fails (the run stays resumable),
    ///   `CancellationError` when cancelled (resumable too), `RelayError` for a broken journal.
    func execute() async throws {
        lastConversationWrite = ContinuousClock.now
        emit(.runStarted(runID: manifest.id, relay: manifest.relay, request: manifest.shownRequest ?? manifest.request,
                         agents: agents.map(AgentInfo.init), resumed: !recorded.isEmpty))
        if let note = manifest.inputNote { emit(.note(note)) }
        if let analysis = manifest.analysis, manifest.document == nil { emit(.note(analysis.shown)) }
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
                // Promise 8: what the agent wrote is checked against what it was given. Only a
                // step of the relay's order can be asked again (a revision another agent asked
                // for has had its chance): otherwise what is unsupported is removed at once.
                var canRevise = false
                if case .relay = next.part { canRevise = !next.isGroundingRevision }
                if let check = groundingCheck(of: message, agent: next.agent, inputs: inputs, step: step, alreadyRevised: !canRevise) {
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
    func runStep(_ step: Int, agent given: AgentDefinition, part: FocusedPrompt.Part, requestedBy: AgentDefinition?,
                         revisionRequest: String?, outputs: [String: String]) async throws -> (AgentMessage, [Revision], [String]) {
        let agent = writing(given, part: part)
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
        // A request not about the workspace is answered without it: no context.md, no lines found.
        let general = isGeneralRequest && agent.extract == .answer
        let prompt = FocusedPrompt.build(agent: agent, request: request(for: agent), context: general ? "" : manifest.context,
                                         part: general ? .relay(previous: nil) : part, budget: budget,
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
        // The model's own answer, or a draft: a few lines, not a page.
        if general || (manifest.analysis?.kind == .draft && agent.extract == .answer) { replyTokens = min(replyTokens, 160) }
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
        text = finishedWriting(text, agent: agent)
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

    /// When the chat file and transcript were last rewritten (`writeConversation`).
    lazy var lastConversationWrite = ContinuousClock.now
}
