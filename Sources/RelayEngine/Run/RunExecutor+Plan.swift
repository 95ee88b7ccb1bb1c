import Foundation
import LanguageModels

/// Plan relays (`"mode": "plan"`, issue 19): coordinator → planner → workers, as in the seed's
/// "LLMs calling LLMs", with the limits its author found missing enforced by the engine.
///
/// - Step 0, the planner: one call under a JSON schema (`{"subtasks": [1…maxWorkers strings]}`,
///   a grammar on llama-server). More subtasks than `maxWorkers` (a server without grammar) is
///   refused: `RelayError.Code.tooManySubtasks`.
/// - Steps 1…n, the workers: each a fresh session of the worker agent with the request and its
///   one subtask (and the retrieved lines if it has `retrieve`), at most `parallel` at once. A
///   worker may read, never write, and never start workers: a call to `request_revision` or any
///   planning tool is refused with `RelayError.Code.workerCannotSpawn` (a `refused` event, the
///   model sees the refusal). Each runs in an executor of its own that shares the run's journal,
///   so its requests and replies are journaled under its own step as they happen.
/// - Step n+1, the coordinator: the request and the workers' results **in plan order** (never the
///   order they finished), each cut to its share of the coordinator's budget, the cut marked.
///
/// Every model call of the turn counts against `maxCalls` (`RelayError.Code.modelCallCap`);
/// an agent whose system prompt and reply leave no room for the request in its budget is
/// refused before any call (`RelayError.Code.overBudget`).
///
/// Resume: a finished worker's reply is in the journal under its step's key and is served from
/// there; only workers without a recorded reply are asked again. Replay: the same, every reply
/// from the journal; the messages, transcript and chat are built in plan order, so the files are
/// byte-identical whatever order the workers finished in.
extension RunExecutor {
    /// What a worker's own executor knows of its place in the plan.
    struct WorkerContext: Sendable {
        var number: Int
        var count: Int
        var subtask: String

        func spawnRefusal(agent: AgentDefinition, tool: String) -> RelayError {
            RelayError(.workerCannotSpawn, "refused: \(agent.name) is worker \(number) of \(count) and workers cannot start workers "
                       + "or have other agents run (\(tool)); do your one subtask and answer with its result")
        }
    }

    /// Tools that would start another agent: refused for workers whatever their roster says.
    static func spawns(_ tool: String) -> Bool {
        let name = tool.lowercased()
        return name == AgentTool.requestRevision.rawValue || ["plan", "spawn", "worker", "delegate", "subtask", "handoff", "agent"].contains { name.contains($0) }
    }

    struct WorkerResult {
        var message: AgentMessage
        var inputs: [String]
        var files: [String]
        var report: ReplayReport
    }

    func executePlan() async throws {
        guard let plan = manifest.planning else {
            throw RelayError(.corruptRun, "run \(manifest.id): a plan relay's run without its plan settings in run.json")
        }
        let roles = plan.roles(in: manifest.roster)
        func agent(_ id: String, _ role: String) throws -> AgentDefinition {
            guard let found = manifest.roster.first(where: { $0.id == id }) else {
                throw RelayError(.corruptRun, "run \(manifest.id): the \(role) '\(id)' is not in the run's roster")
            }
            return found
        }
        let planner = try agent(roles.planner, "planner")
        var worker = try agent(roles.worker, "worker")
        var coordinator = try agent(roles.coordinator, "coordinator")
        // Workers read, and do their one subtask in their own words; nobody asks for revisions
        // of work done in parallel (a revision would be a worker spawning work).
        worker.tools = worker.allowedTools.filter { !$0.writes && $0 != .requestRevision }
        // A worker may choose workspace lines for its subtask under the grammar (`extract:
        // lines`); the other extractions answer the whole request or a document, not a subtask.
        if worker.extract != .lines { worker.extract = nil }
        coordinator.tools = coordinator.allowedTools.filter { $0 != .requestRevision }
        for (role, agent) in [("planner", planner), ("worker", worker), ("coordinator", coordinator)] { try checkRoom(agent, role: role) }
        callBudget = CallBudget(cap: plan.callCap, run: manifest.id)

        var outputs: [String: String] = [:]
        let (planned, subtasks) = try await runPlanner(planner, least: plan.minWorkers, most: plan.maxWorkers)
        messages.append(planned)
        outputs[planner.id] = planned.text
        emit(.planned(step: 0, subtasks: subtasks))
        try writeConversation(after: 0, finished: false)

        let results = try await runWorkers(worker, subtasks: subtasks, parallel: plan.parallel)
        for result in results {
            var message = result.message
            // Checked in plan order, after all have finished: the same notes on every replay.
            if let check = groundingCheck(of: message, agent: worker, inputs: result.inputs, step: message.step, alreadyRevised: true) {
                message.grounding = check.note
                if let cleaned = check.cleaned { message.text = cleaned }
            }
            messages.append(message)
            filesWritten += result.files
            report.requests += result.report.requests
            report.files += result.report.files
        }
        var step = subtasks.count + 1
        try writeConversation(after: step - 1, finished: false)

        let (combined, cuts) = workerResults(messages.filter { $0.worker != nil }, for: coordinator)
        if recorded.steps[step] == nil { for cut in cuts { emit(.note("\(coordinator.label): \(cut)")) } }
        let given = (name: "Workers — results in plan order", text: combined)
        givenCuts = cuts
        var (message, _, inputs) = try await runStep(step, agent: coordinator, part: .relay(previous: given), requestedBy: nil, revisionRequest: nil, outputs: [:])
        if let check = groundingCheck(of: message, agent: coordinator, inputs: inputs, step: step, alreadyRevised: false) {
            message.grounding = check.note
            if let cleaned = check.cleaned { message.text = cleaned }
            messages.append(message)
            step += 1
            if check.revise {
                let (revisedMessage, _, revisedInputs) = try await runStep(
                    step, agent: coordinator, part: .grounding(previous: given, own: message.text, unsupported: check.note.unsupported),
                    requestedBy: Self.groundingChecker, revisionRequest: check.note.request, outputs: [:])
                var revised = revisedMessage
                if let again = groundingCheck(of: revised, agent: coordinator, inputs: revisedInputs, step: step, alreadyRevised: true) {
                    revised.grounding = again.note
                    if let cleaned = again.cleaned { revised.text = cleaned }
                }
                messages.append(revised)
                message = revised
                step += 1
            }
        } else {
            messages.append(message)
            step += 1
        }
        outputs[coordinator.id] = message.text
        try finishRun(after: step, outputs: outputs)
    }

    // MARK: The planner

    /// `{"subtasks": ["…", …]}`: `least` to `most` short sentences.
    static func planSchema(least: Int = 1, most: Int) -> JSONValue {
        ["type": "object",
         "properties": ["subtasks": ["type": "array", "items": ["type": "string", "minLength": 3, "maxLength": 240],
                                     "minItems": .number(Double(max(1, min(least, most)))), "maxItems": .number(Double(max(1, most)))]],
         "required": ["subtasks"], "additionalProperties": false]
    }

    /// The subtasks of a planner's reply: the schema's array, or (a server that did not enforce
    /// it) the reply's list items.
    static func subtasks(in reply: String) -> [String] {
        let trimmed = reply.trimmingCharacters(in: .whitespacesAndNewlines)
        if let json = try? JSONValue(parsing: trimmed), let array = json["subtasks"]?.arrayValue {
            return array.compactMap(\.stringValue).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        }
        return trimmed.split(separator: "\n").compactMap { line -> String? in
            var text = Substring(line.trimmingCharacters(in: .whitespaces))
            guard let first = text.first, "-*0123456789".contains(first) else { return nil }
            while let head = text.first, "-*0123456789.) ".contains(head) { text = text.dropFirst() }
            let item = text.trimmingCharacters(in: .whitespaces)
            return item.isEmpty ? nil : item
        }
    }

    /// The subtasks a plan keeps, and a note for each one dropped: one that states a number,
    /// date or name none of the planner's inputs hold, or one that shares no word with the
    /// request and at least half of its words with the planning instruction (an echo).
    static func groundedSubtasks(_ subtasks: [String], sources: [String], request: String, instruction: String,
                                 ignoring: Set<String>) -> (kept: [String], dropped: [String]) {
        let requestTerms = Set(SearchTerms.terms(of: request)), instructionTerms = Set(SearchTerms.terms(of: instruction))
        var kept: [String] = [], dropped: [String] = []
        for (index, subtask) in subtasks.enumerated() {
            let unsupported = Claims.unsupported(in: subtask, sources: sources, ignoring: ignoring).map(\.text)
            let terms = Set(SearchTerms.terms(of: subtask))
            if !unsupported.isEmpty {
                dropped.append("subtask \(index + 1) dropped: \(unsupported.joined(separator: ", ")) is in none of the planner's inputs")
            } else if !terms.isEmpty, terms.isDisjoint(with: requestTerms), terms.intersection(instructionTerms).count * 2 >= terms.count {
                dropped.append("subtask \(index + 1) dropped: it repeats the planning instruction")
            } else {
                kept.append(subtask)
            }
        }
        return (kept, dropped)
    }

    private func runPlanner(_ agent: AgentDefinition, least: Int, most: Int) async throws -> (AgentMessage, [String]) {
        let step = 0
        let restored = recorded.steps[step] != nil
        let info = AgentInfo(agent)
        let budget = agent.tokenBudget ?? manifest.contextTokens
        if !restored { emit(.agentStarted(step: step, agent: info, revisionRequestedBy: nil, revisionRequest: nil)) }
        let prompt = FocusedPrompt.build(agent: agent, request: request(for: agent), context: manifest.context, part: .relay(previous: nil),
                                         budget: budget, toolCount: 0, extras: extras(for: agent))
        for cut in prompt.cuts where !restored { emit(.note("\(agent.label): \(cut) (token budget \(budget))")) }
        let instruction = "Split the request into \(least) to \(most) subtasks that can each be done on its own, one short sentence each. "
        let user = prompt.user + "\n\n" + instruction + #"Reply only with JSON: {"subtasks": ["…"]}."#
        var options = ModelOptions(maxTokens: min(FocusedPrompt.replyTokens(for: agent, budget: budget), 32 + 80 * most))
        options.responseSchema = ResponseSchema(name: "plan", schema: Self.planSchema(least: least, most: most))
        let answer = try await modelCall("\(step)/0", step: step, agent: agent,
                                         request: ModelRequest(messages: [.system(prompt.system), .user(user)], options: options),
                                         quiet: restored, streams: false)
        var subtasks = Self.subtasks(in: answer.reply.text)
        var seen: Set<String> = []
        subtasks = subtasks.filter { seen.insert($0.lowercased()).inserted }  // the same subtask twice is one worker's work
        guard subtasks.count <= most else {
            throw RelayError(.tooManySubtasks, "run \(manifest.id): \(agent.name) planned \(subtasks.count) subtasks and relay '\(manifest.relay)' allows \(most) "
                             + "(relay.json \"maxWorkers\"); nothing was started. The model server did not enforce the plan's schema: use llama-server, or raise maxWorkers")
        }
        var cuts = prompt.cuts
        // Promise 8 holds for a plan too: a subtask is shown in the chat and steers a worker, so
        // one with a number, date or name the planner was not given is dropped, as is one that
        // only repeats the engine's instruction (SmolLM2: "The shed has a limited capacity
        // of 100 meters.", "This task can be done on one short sentence per sub-task.").
        let (kept, dropped) = Self.groundedSubtasks(subtasks, sources: prompt.sources, request: request(for: agent), instruction: instruction,
                                                    ignoring: Set(manifest.roster.flatMap { [$0.name, $0.id] } + ["Relay"]))
        subtasks = kept
        cuts += dropped
        for note in dropped where !restored { emit(.note("\(agent.label): \(note)")) }
        if subtasks.isEmpty {
            // Nothing usable: one worker does the whole request, and the transcript says so.
            subtasks = [manifest.requestLead]
            cuts.append("the plan held no subtask; one worker takes the whole request")
        }
        let text = subtasks.enumerated().map { "\($0.offset + 1). \($0.element)" }.joined(separator: "\n")
        if !restored, mode == .live { emit(.textDelta(step: step, agentID: agent.id, text: text)) }
        var tally = Tally()
        tally.add(answer)
        let message = AgentMessage(
            step: step, agent: info, text: text, toolCalls: [], promptTokens: tally.promptTokens, completionTokens: tally.completionTokens,
            modelCalls: tally.calls, milliseconds: tally.milliseconds, started: tally.started ?? manifest.created, cuts: cuts, restored: restored)
        try finishStep(message, agent: agent)
        return (message, subtasks)
    }

    // MARK: The workers

    /// Runs the workers, at most `parallel` at a time, each in its own executor; the results
    /// come back in plan order whatever order they finished in.
    private func runWorkers(_ agent: AgentDefinition, subtasks: [String], parallel: Int) async throws -> [WorkerResult] {
        let count = subtasks.count
        var executors: [RunExecutor] = []
        for (index, subtask) in subtasks.enumerated() {
            let child = RunExecutor(manifest: manifest, workspace: workspace, mode: mode, recorded: recorded, journal: journal, models: models,
                                    source: source, logger: logger, emit: emit)
            child.callBudget = callBudget
            child.worker = WorkerContext(number: index + 1, count: count, subtask: subtask)
            child.cachedModels = cachedModels
            executors.append(child)
        }
        var results = [WorkerResult?](repeating: nil, count: count)
        try await withThrowingTaskGroup(of: (Int, WorkerResult).self) { group in
            var next = 0
            while next < count || !group.isEmpty {
                while next < count, next < parallel + results.lazy.filter({ $0 != nil }).count {
                    let index = next, child = executors[index]
                    group.addTask {
                        let (message, _, inputs) = try await child.runStep(
                            index + 1, agent: agent, part: .subtask(number: index + 1, of: count, text: child.worker!.subtask),
                            requestedBy: nil, revisionRequest: nil, outputs: [:])
                        return (index, WorkerResult(message: message, inputs: inputs, files: child.filesWritten, report: child.report))
                    }
                    next += 1
                }
                guard let (index, result) = try await group.next() else { break }
                results[index] = result
            }
        }
        return results.map { $0! }
    }

    // MARK: Limits

    /// `overBudget` when an agent's own system prompt and reply leave too little of its budget
    /// for the request and its inputs — nothing the engine could cut would make it fit.
    func checkRoom(_ agent: AgentDefinition, role: String) throws {
        let budget = agent.tokenBudget ?? manifest.contextTokens
        let fixed = FocusedPrompt.estimate(agent.systemPrompt) + FocusedPrompt.replyTokens(for: agent, budget: budget) + 48
        let least = 256
        guard fixed + least <= budget else {
            throw RelayError(.overBudget, "\(manifest.rosterFile): agent '\(agent.id)' (the \(role) of relay '\(manifest.relay)'): its system prompt "
                             + "(about \(FocusedPrompt.estimate(agent.systemPrompt)) tokens) and reply (\(FocusedPrompt.replyTokens(for: agent, budget: budget))) "
                             + "leave less than \(least) of its \(budget)-token budget for the request; shorten the prompt, lower maxTokens or raise tokenBudget")
        }
    }

    /// The workers' results for the coordinator, in plan order, each cut to an equal share of
    /// what the coordinator's budget leaves (the cut marked in the text and named).
    func workerResults(_ results: [AgentMessage], for coordinator: AgentDefinition) -> (String, [String]) {
        let budget = coordinator.tokenBudget ?? manifest.contextTokens
        var room = budget - FocusedPrompt.replyTokens(for: coordinator, budget: budget) - 48 - coordinator.allowedTools.count * 90
            - FocusedPrompt.estimate(coordinator.systemPrompt)
        room -= min(FocusedPrompt.estimate(manifest.context), room / 4) + 12
        if (coordinator.retrieve ?? 0) > 0 { room -= room / 4 }
        if manifest.previousExchange != nil { room -= room / 6 }
        room -= min(FocusedPrompt.estimate(request(for: coordinator)), room / 2) + 24
        let share = max(48, room / max(1, results.count) - 16)
        var cuts: [String] = []
        let parts = results.map { message -> String in
            let number = message.worker ?? 0
            let (kept, cut) = FocusedPrompt.fit(message.text.trimmingCharacters(in: .whitespacesAndNewlines), tokens: share,
                                                what: "worker \(number)'s result", budget: budget)
            if let cut { cuts.append(cut) }
            return "[\(number). \(message.subtask ?? "") — \(message.agent.name)]:\n\(kept.isEmpty ? "(no answer)" : kept)"
        }
        return (parts.joined(separator: "\n\n"), cuts)
    }
}

/// A turn's model calls against its cap, counted across the workers running at once. Calls the
/// journal answers count too, so a resumed turn reaches the cap where the first run would have.
final class CallBudget: @unchecked Sendable {
    let cap: Int
    let run: String
    private let lock = NSLock()
    private var used = 0

    init(cap: Int, run: String) {
        self.cap = cap
        self.run = run
    }

    func spend(step: Int, agent: AgentDefinition) throws {
        try lock.withLock {
            used += 1
            guard used <= cap else {
                throw RelayError(.modelCallCap, "run \(run): \(agent.name) (step \(step)) would make model call \(used) of a turn capped at \(cap) "
                                 + "(relay.json \"maxCalls\"); the call was not made")
            }
        }
    }
}
