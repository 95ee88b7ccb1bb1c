// `make bench`: what the relay engine costs on top of the model.
//
// 1. Engine overhead per agent step, with an in-process model that answers at once: a relay of
//    four agents through RelayEngine (fresh session, focused prompt, journal, transcript and
//    chat file written after every step) against the same model calls made in a bare loop, in
//    the same process — durable (fsync, the default) and not.
// 2. A relay turn on the local model (`make model`), split into model time (the replies, as the
//    run journal timed them) and engine time (the rest of the wall time), against the same
//    requests sent straight to the model client, one after the other.
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
    let engine = RelayEngine(workspace: workspace, models: .single(InstantModel()))
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

func format(_ seconds: Double) -> String {
    seconds < 0.001 ? String(format: "%.1f µs", seconds * 1e6) : String(format: "%.2f ms", seconds * 1e3)
}

print("relay engine: overhead per agent step (\(runs) runs × 4 agents, an instant in-process model)")
for durable in (environment["RELAY_BENCH_DURABLE"].map { [$0 != "0"] } ?? [true, false]) {
    let (engine, bare) = try await engineOverhead(durable: durable)
    print("  \(durable ? "durable (fsync) " : "without fsync   ")  bare model calls \(format(bare))/step · through the engine \(format(engine))/step"
          + " · engine overhead \(format(engine - bare))/step (\(String(format: "%.0f", engine / max(bare, 1e-9)))× the bare call)")
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
    print("\nrelay turn on the local model: skipped — no model server at \(baseURL) (run `make model`)")
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
let engine = RelayEngine(workspace: workspace, models: .single(local))
let turns = Int(environment["RELAY_BENCH_TURNS"] ?? "") ?? 3
print("\nrelay turn on the local model (\(local.description); the template's four agents; \(turns) turns)")
for turn in 0..<turns {
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
    print(String(format: "  turn %d: wall %.2f s = model %.2f s + engine %.3f s (%.2f%%) · %d model calls · the same %d requests sent directly: %.2f s (ratio %.2f; %d of %d replies identical)",
                 turn + 1, wall, model, wall - model, (wall - model) / wall * 100, requests.count, requests.count, direct, wall / direct, sameReplies, requests.count))
}
