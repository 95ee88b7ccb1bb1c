// `make bench`: what the relay engine costs on top of the model.
//
// 1. Engine overhead per agent step, with an in-process model that answers at once: a relay of
//    four agents through RelayEngine (fresh session, focused prompt, journal, transcript and
//    chat file written after every step) against the same model calls made in a bare loop, in
//    the same process — durable (fsync, the default) and not.
// 2. A relay turn on the local model (`make model`), split into model time (the replies, as the
//    run journal timed them) and engine time (the rest of the wall time), against the same
//    requests sent straight to the model client, one after the other.
// 3. A plan relay (issue 19) with 4 workers: on a delaying in-process model (fixed per-call
//    times) at `parallel` 1, 2 and 4, wall time against the sum and the max of the workers'
//    times, and the engine's overhead per worker; then on the local model at `parallel` 1 and 2,
//    against the same four worker requests sent straight to the model client one after the other
//    and all at once (the server's own speed-up from its slots, the peer of the engine's).
import Foundation
import LanguageModels
import Logging
import RelayEngine
import WorkspaceCore

let environment = ProcessInfo.processInfo.environment
let runs = Int(environment["RELAY_BENCH_RUNS"] ?? "") ?? 50

/// Answers every request at once with a short text: no model time at all.
struct InstantModel: LanguageModel {
    var description: String { "instant in-process model (benchmark double)" }
    func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        AsyncThrowingStream { continuation in
            for piece in ["Llamas ", "are ", "camelids ", "from ", "the ", "Andes."] { continuation.yield(.text(piece)) }
            continuation.yield(.usage(TokenUsage(promptTokens: 120, completionTokens: 6)))
            continuation.yield(.finished(.stop))
            continuation.finish()
        }
    }
}

let roster = """
    [{"id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "systemPrompt": "You are Paige. Plan.", "order": 0, "tools": []},
     {"id": "researcher", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Find facts.", "order": 1, "tools": []},
     {"id": "writer", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Write.", "order": 2, "tools": []},
     {"id": "reviewer", "name": "Vera", "emoji": "🔍", "color": "#9B59B6", "systemPrompt": "You are Vera. Review.", "order": 3, "tools": []}]
    """

func scratchWorkspace(durable: Bool) throws -> (Workspace, String) {
    let base = FileManager.default.temporaryDirectory.path + "/relay-engine-bench-" + UUID().uuidString
    var (workspace, _) = try Workspace.initialize(at: base, template: .embedded)
    workspace.durable = durable
    try workspace.write("AgentConfiguration.json", string: roster)
    return (workspace, base)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func engineOverhead(durable: Bool) async throws -> (engine: Double, bare: Double) {
    let (workspace, base) = try scratchWorkspace(durable: durable)
    defer { try? FileManager.default.removeItem(atPath: base) }
    let engine = RelayRunner(workspace: workspace, models: .single(InstantModel()))
    // Warm up (first file creations, caches).
    let warm = try engine.prepare(ask: "warm up", conversation: "bench")
    try await engine.execute(warm.id) { _ in }
    var preparing = Duration.zero, executing = Duration.zero
    for run in 0..<runs {
        let start = ContinuousClock.now
        let manifest = try engine.prepare(ask: "Tell me about llamas, run \(run)", conversation: environment["RELAY_BENCH_ONE_CHAT"] == nil ? "bench-\(run)" : "bench")
        let prepared = ContinuousClock.now
        try await engine.execute(manifest.id) { _ in }
        preparing += prepared - start
        executing += ContinuousClock.now - prepared
    }
    // The same with one agent: what a run costs whatever its length, so that (4 − 1) / 3 is
    // what each further agent step adds.
    var single = Duration.zero
    for run in 0..<runs {
        let start = ContinuousClock.now
        let manifest = try engine.prepare(ask: "Tell me about llamas, single \(run)", agent: "Wren",
                                          conversation: environment["RELAY_BENCH_ONE_CHAT"] == nil ? "single-\(run)" : "bench")
        try await engine.execute(manifest.id) { _ in }
        single += ContinuousClock.now - start
    }
    let perRun = seconds(preparing + executing) / Double(runs)
    let marginal = (perRun - seconds(single) / Double(runs)) / 3
    print("    (marginal cost of one more agent step: \(format(marginal)); a one-agent run: \(format(seconds(single) / Double(runs))))")
    let engineTime = seconds(preparing + executing) / Double(runs * 4)
    print("    (\(durable ? "durable" : "no fsync"): preparing a run \(format(seconds(preparing) / Double(runs))), running it \(format(seconds(executing) / Double(runs))) for 4 steps)")

    // The same four calls per run, made in a bare loop: request built, streamed, collected.
    let model = InstantModel()
    let bareStart = ContinuousClock.now
    for run in 0..<runs {
        var previous = ""
        for agent in ["Paige", "Remy", "Wren", "Vera"] {
            let user = previous.isEmpty ? "[User Request]:\nTell me about llamas, run \(run)" : "[User Request]:\nTell me about llamas, run \(run)\n\n[Previous Agent — x]:\n\(previous)"
            let reply = try await model.complete(ModelRequest(messages: [.system("You are \(agent)."), .user(user)]))
            previous = reply.text
        }
    }
    let bare = seconds(ContinuousClock.now - bareStart) / Double(runs * 4)
    return (engineTime, bare)
}

/// Prints a line at once (a long run on a busy machine shows each figure as it comes, also into a file).
func flushed(_ line: String) {
    print(line)
    fflush(nil)
}

func format(_ seconds: Double) -> String {
    seconds < 0.001 ? String(format: "%.1f µs", seconds * 1e6) : String(format: "%.2f ms", seconds * 1e3)
}

print("relay engine: overhead per agent step (\(runs) runs × 4 agents, an instant in-process model)")
for durable in (environment["RELAY_BENCH_DURABLE"].map { [$0 != "0"] } ?? [true, false]) {
    let (engine, bare) = try await engineOverhead(durable: durable)
    print("  \(durable ? "durable (fsync) " : "without fsync   ")  bare model calls \(format(bare))/step · through the engine \(format(engine))/step"
          + " · engine overhead \(format(engine - bare))/step (\(String(format: "%.0f", engine / max(bare, 1e-9)))× the bare call)")
}


// 3a. A plan turn on a model with fixed per-call delays.

/// Answers after a fixed delay: the planner's call (under the plan schema) with four subtasks,
/// every other call with a short text. A benchmark double: no model time but the sleep.
struct DelayingModel: LanguageModel {
    var plannerDelay: Duration
    var workerDelay: Duration
    var description: String { "delaying in-process model (benchmark double)" }
    func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelEvent, any Error> {
        let planning = request.options.responseSchema?.name == "plan"
        let delay = planning ? plannerDelay : workerDelay
        return AsyncThrowingStream { continuation in
            let task = Task {
                try? await Task.sleep(for: delay)
                continuation.yield(.text(planning ? #"{"subtasks": ["the first part", "the second part", "the third part", "the fourth part"]}"# : "Llamas are camelids."))
                continuation.yield(.usage(TokenUsage(promptTokens: 120, completionTokens: 6)))
                continuation.yield(.finished(.stop))
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

let planRoster = """
    [{"id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "systemPrompt": "You are Paige. Split the request.", "order": 0, "tools": []},
     {"id": "worker", "name": "Remy", "emoji": "🔎", "color": "#2E9E6B", "systemPrompt": "You are Remy. Do your subtask.", "order": 1, "tools": [], "grounding": false},
     {"id": "coordinator", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "systemPrompt": "You are Wren. Combine the results.", "order": 2, "tools": [], "grounding": false}]
    """

/// A plan relay "plan" with `workers` subtasks (exactly: the schema's min and max) run `parallel` at once.
func writePlanRelay(_ workspace: Workspace, workers: Int, parallel: Int, roster: String = planRoster, file: String = "PlanBench.json") throws {
    try workspace.write(file, string: roster)
    let relays = #"{"version": 1, "relays": {"plan": {"roster": "\#(file)", "input": "chat", "mode": "plan", "planner": "planner", "worker": "worker", "#
        + #""coordinator": "coordinator", "minWorkers": \#(workers), "maxWorkers": \#(workers), "parallel": \#(parallel)}}}"#
    var configuration = try JSONValue(parsing: String(decoding: try workspace.read("relay.json"), as: UTF8.self)).objectValue ?? [:]
    configuration["relays"] = try JSONValue(parsing: relays)["relays"]
    try workspace.write("relay.json", string: JSONValue.object(configuration).jsonText)
}

/// The worker steps' times (from their journaled replies: start and milliseconds) of run `id`.
func workerSpans(_ base: String, run id: String, workers: ClosedRange<Int>) throws -> (sum: Double, max: Double, first: Date, last: Date) {
    let journal = try String(contentsOfFile: base + "/.relay/runs/\(id)/journal.jsonl", encoding: .utf8)
    let records = try journal.split(separator: "\n").map { try JSONDecoder().decode(JournalRecord.self, from: Data($0.utf8)) }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    var sum = 0.0, most = 0.0
    var first = Date.distantFuture, last = Date.distantPast
    for record in records where record.type == .response {
        guard let step = record.step, workers.contains(step), let ms = record.milliseconds else { continue }
        sum += Double(ms) / 1000
        most = max(most, Double(ms) / 1000)
        if let started = record.started.flatMap({ formatter.date(from: $0) ?? ISO8601DateFormatter().date(from: $0) }) {
            first = min(first, started)
            last = max(last, started.addingTimeInterval(Double(ms) / 1000))
        }
    }
    return (sum, most, first, last)
}

let planWorkers = 4
let delayed = DelayingModel(plannerDelay: .milliseconds(20), workerDelay: .milliseconds(200))
let planTurns = Int(environment["RELAY_BENCH_PLAN_TURNS"] ?? "") ?? 5
flushed("\nplan relay: \(planWorkers) workers on a delaying in-process model (planner 20 ms, each worker and the coordinator 200 ms; \(planTurns) turns each)")
for parallel in [1, 2, 4] {
    let (workspace, base) = try scratchWorkspace(durable: true)
    defer { try? FileManager.default.removeItem(atPath: base) }
    try writePlanRelay(workspace, workers: planWorkers, parallel: parallel)
    let engine = RelayRunner(workspace: workspace, models: .single(delayed))
    var wall = 0.0, sum = 0.0, most = 0.0, fanOut = 0.0
    for turn in 0..<planTurns {
        let manifest = try engine.prepare(ask: "Tell me about llamas, turn \(turn)", relay: "plan", conversation: "plan-bench-\(turn)")
        let start = ContinuousClock.now
        try await engine.execute(manifest.id) { _ in }
        wall += seconds(ContinuousClock.now - start)
        let spans = try workerSpans(base, run: manifest.id, workers: 1...planWorkers)
        sum += spans.sum
        most += spans.max
        fanOut += spans.last.timeIntervalSince(spans.first)
    }
    let n = Double(planTurns)
    // The model's own time in a turn: planner + the workers' phase at ideal parallelism + coordinator.
    let ideal = 0.020 + Double((planWorkers + parallel - 1) / parallel) * 0.200 + 0.200
    flushed(String(format: "  parallel %d: wall %.3f s/turn · workers' times: sum %.3f s, max %.3f s, fan-out phase %.3f s → parallelism achieved %.2f× (of %d) · engine overhead %.1f ms per step (planner, workers, coordinator)",
                 parallel, wall / n, sum / n, most / n, fanOut / n, sum / max(fanOut, 1e-9), min(parallel, planWorkers),
                 (wall / n - ideal) / Double(planWorkers + 2) * 1000))
}

// 2. A relay turn on the local model.
let baseURL = ModelConfiguration.localDefault.applyingEnvironment(environment).resolvedBaseURL
guard let parts = URLComponents(string: baseURL), let port = parts.port, {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr(parts.host ?? "127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
}() else {
    flushed("\nrelay turn on the local model: skipped — no model server at \(baseURL) (run `make model`)")
    exit(0)
}
let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
// Temperature 0: the same request gets the same reply, so the direct re-send below produces the
// same tokens and the two wall times compare like for like.
var localConfiguration = ModelConfiguration.localDefault
localConfiguration.temperature = 0
let local = try ModelFactory.make(localConfiguration, logger: logger)
let (workspace, base) = try scratchWorkspace(durable: true)
defer { try? FileManager.default.removeItem(atPath: base) }
let embeddedRoster = WorkspaceTemplate.embedded.files.first { $0.path == "AgentConfiguration.json" }!
try workspace.write("AgentConfiguration.json", bytes: embeddedRoster.bytes)
let engine = RelayRunner(workspace: workspace, models: .single(local))
let turns = Int(environment["RELAY_BENCH_TURNS"] ?? "") ?? 3
// RELAY_BENCH_RELAY_TURNS=0 skips the template's turn (its direct re-send has no schema, so on a
// busy machine a reply can run to its token limit) and goes on to the plan relay.
let relayTurns = Int(environment["RELAY_BENCH_RELAY_TURNS"] ?? "") ?? turns
flushed("\nrelay turn on the local model (\(local.description); the template's four agents; \(relayTurns) turns)")
for turn in 0..<relayTurns {
    let manifest = try engine.prepare(ask: "Name two things to pack for a day hike (\(turn + 1)).", conversation: "bench-local")
    let start = ContinuousClock.now
    try await engine.execute(manifest.id) { _ in }
    let wall = seconds(ContinuousClock.now - start)
    let summary = try engine.store.summary(manifest.id)
    let model = Double(summary.milliseconds) / 1000
    // The same requests again, straight to the client.
    let journal = try String(contentsOfFile: base + "/.relay/runs/\(manifest.id)/journal.jsonl", encoding: .utf8)
    let requests = try journal.split(separator: "\n").map { try JSONDecoder().decode(JournalRecord.self, from: Data($0.utf8)) }.filter { $0.type == .request }
    let directStart = ContinuousClock.now
    let responses = try journal.split(separator: "\n").map { try JSONDecoder().decode(JournalRecord.self, from: Data($0.utf8)) }.filter { $0.type == .response }
    var sameReplies = 0
    for (index, record) in requests.enumerated() {
        // The request exactly as the engine sent it (the journal holds it whole).
        let request = ModelRequest(messages: record.messages ?? [], tools: record.toolDefinitions ?? [], options: ModelOptions(maxTokens: record.maxTokens))
        let reply = try await local.complete(request)
        if index < responses.count, reply.text == responses[index].text ?? "" { sameReplies += 1 }
    }
    let direct = seconds(ContinuousClock.now - directStart)
    flushed(String(format: "  turn %d: wall %.2f s = model %.2f s + engine %.3f s (%.2f%%) · %d model calls · the same %d requests sent directly: %.2f s (ratio %.2f; %d of %d replies identical)",
                 turn + 1, wall, model, wall - model, (wall - model) / wall * 100, requests.count, requests.count, direct, wall / direct, sameReplies, requests.count))
}


// 3b. The same 4-subtask plan turn on the local model, `parallel` 1 and 2.
let localPlanRoster = """
    [{"id": "planner", "name": "Paige", "emoji": "📋", "color": "#4A90D9", "order": 0, "tools": [],
      "systemPrompt": "You are Paige, the Planner. You split a request into small independent subtasks, one per thing the request names."},
     {"id": "worker", "name": "Wren", "emoji": "✍️", "color": "#E67E22", "order": 1, "tools": [], "maxTokens": 96, "grounding": false,
      "systemPrompt": "You are Wren, the Writer. Do the one subtask you are given in two or three sentences."},
     {"id": "coordinator", "name": "Vera", "emoji": "🔍", "color": "#9B59B6", "order": 2, "tools": [], "maxTokens": 96, "grounding": false,
      "systemPrompt": "You are Vera. Combine the workers' results into one short answer."}]
    """
let planRequest = "Compare four teas: green, black, oolong and white."
flushed("\nplan relay on the local model (\(local.description)): \(planWorkers) workers, \(turns) turns each")
var workerRequests: [ModelRequest] = []
var planWalls: [Int: Double] = [:]
for parallel in [1, 2] {
    let (planSpace, planBase) = try scratchWorkspace(durable: true)
    defer { try? FileManager.default.removeItem(atPath: planBase) }
    try writePlanRelay(planSpace, workers: planWorkers, parallel: parallel, roster: localPlanRoster)
    let planEngine = RelayRunner(workspace: planSpace, models: .single(local))
    var wall = 0.0, sum = 0.0, fanOut = 0.0, tokens = 0, workerTokens = 0
    for turn in 0..<turns {
        let manifest = try planEngine.prepare(ask: planRequest, relay: "plan", conversation: "plan-local-\(turn)")
        let start = ContinuousClock.now
        try await planEngine.execute(manifest.id) { _ in }
        wall += seconds(ContinuousClock.now - start)
        let spans = try workerSpans(planBase, run: manifest.id, workers: 1...planWorkers)
        sum += spans.sum
        fanOut += spans.last.timeIntervalSince(spans.first)
        let journal = try String(contentsOfFile: planBase + "/.relay/runs/\(manifest.id)/journal.jsonl", encoding: .utf8)
        let records = try journal.split(separator: "\n").map { try JSONDecoder().decode(JournalRecord.self, from: Data($0.utf8)) }
        for record in records where record.type == .response {
            let used = (record.usage?.promptTokens ?? 0) + (record.usage?.completionTokens ?? 0)
            tokens += used
            if let step = record.step, (1...planWorkers).contains(step) { workerTokens += record.usage?.completionTokens ?? 0 }
        }
        if workerRequests.isEmpty {
            workerRequests = records.filter { $0.type == .request && ($0.step.map { (1...planWorkers).contains($0) } ?? false) }
                .map { ModelRequest(messages: $0.messages ?? [], tools: $0.toolDefinitions ?? [], options: ModelOptions(maxTokens: $0.maxTokens)) }
        }
    }
    let n = Double(turns)
    planWalls[parallel] = wall / n
    flushed(String(format: "  parallel %d: wall %.2f s/turn · workers' fan-out phase %.2f s (their replies' times sum to %.2f s) · %.0f tokens/turn, %.0f generated by workers",
                 parallel, wall / n, fanOut / n, sum / n, Double(tokens) / n, Double(workerTokens) / n))
}
if let one = planWalls[1], let two = planWalls[2] {
    flushed(String(format: "  the engine's speed-up from 2 parallel workers: %.2f× (turn wall, parallel 1 / parallel 2)", one / two))
}
// The peer: the same worker requests, straight to the client, one after the other and all at once.
if !workerRequests.isEmpty {
    var sequential = 0.0, concurrent = 0.0
    for _ in 0..<turns {
        let start = ContinuousClock.now
        for request in workerRequests { _ = try await local.complete(request) }
        sequential += seconds(ContinuousClock.now - start)
        let together = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in workerRequests { group.addTask { _ = try await local.complete(request) } }
            try await group.waitForAll()
        }
        concurrent += seconds(ContinuousClock.now - together)
    }
    flushed(String(format: "  peer — the same %d worker requests sent straight to the client: one after the other %.2f s, all at once %.2f s → the server's speed-up %.2f×",
                 workerRequests.count, sequential / Double(turns), concurrent / Double(turns), sequential / max(concurrent, 1e-9)))
}
