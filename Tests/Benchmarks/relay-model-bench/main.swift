// `make bench`: time to first token and tokens per second through Relay's OpenAI-compatible
// client against `curl` on the same prompt, the same local server, in the same run, as ratios.
// The client should add nothing measurable. Runs alternate (curl, Relay, curl, …) so a server
// that speeds up or slows down during the run affects both alike.
import Foundation
import LanguageModels
import Logging

let environment = ProcessInfo.processInfo.environment
let baseURL = ModelConfiguration.localDefault.applyingEnvironment(environment).resolvedBaseURL
let modelName = environment["RELAY_MODEL"] ?? ModelConfiguration.defaultLocalModel
let rounds = Int(environment["RELAY_BENCH_ROUNDS"] ?? "") ?? 10
let maxTokens = 128
let prompt = "Write a short paragraph about llamas and alpacas."

struct Sample {
    var firstToken: Double  // seconds from sending the request
    var tokensPerSecond: Double  // completion tokens after the first, over the time after it
    var tokens: Int
}

/// The request body both sides send (what OpenAICompatibleModel sends for this request).
let body: [String: Any] = [
    "model": modelName, "stream": true, "stream_options": ["include_usage": true], "temperature": 0, "max_tokens": maxTokens,
    "messages": [["role": "user", "content": prompt]],
]

@MainActor func relaySample(_ model: OpenAICompatibleModel) async throws -> Sample {
    let request = ModelRequest(messages: [.user(prompt)], options: ModelOptions(temperature: 0, maxTokens: maxTokens))
    let start = ContinuousClock.now
    var first: ContinuousClock.Instant?
    var tokens = 0
    for try await event in model.stream(request) {
        switch event {
        case .text: if first == nil { first = .now }
        case .usage(let usage): tokens = usage.completionTokens
        default: break
        }
    }
    let end = ContinuousClock.now
    guard let first else { throw LanguageModelError(.malformedResponse, "no text came back") }
    return Sample(firstToken: seconds(first - start), tokensPerSecond: Double(tokens - 1) / seconds(end - first), tokens: tokens)
}

/// curl streams the same request; its output is read as it arrives and timed here the same
/// way: the first chunk with content, and the end of the stream.
@MainActor func curlSample() throws -> Sample {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["curl", "-sN", "-X", "POST", baseURL + "/chat/completions", "-H", "Content-Type: application/json",
                         "--data-binary", String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)]
    let output = Pipe()
    process.standardOutput = output
    let start = ContinuousClock.now
    try process.run()
    var first: ContinuousClock.Instant?
    var text = ""
    let handle = output.fileHandleForReading
    while true {
        let data = handle.availableData
        if data.isEmpty { break }
        text += String(decoding: data, as: UTF8.self)
        if first == nil, text.range(of: #""content":"[^"]"#, options: .regularExpression) != nil { first = .now }
    }
    let end = ContinuousClock.now
    process.waitUntilExit()
    guard let first, let match = text.range(of: #""completion_tokens":\s*\d+"#, options: .regularExpression) else {
        throw LanguageModelError(.malformedResponse, "curl got no streamed text and usage from \(baseURL): \(text.prefix(300))")
    }
    let tokens = Int(text[match].split(separator: ":").last!.trimmingCharacters(in: .whitespaces))!
    return Sample(firstToken: seconds(first - start), tokensPerSecond: Double(tokens - 1) / seconds(end - first), tokens: tokens)
}

/// What starting curl costs before it sends anything: a whole `curl` run against /health,
/// which answers at once. curl's first-token time includes this; Relay's does not (it is
/// already running), so it is shown and subtracted.
@MainActor func curlStartCost() throws -> Double {
    let health = baseURL.hasSuffix("/v1") ? String(baseURL.dropLast(3)) + "/health" : baseURL + "/health"
    var samples: [Double] = []
    for _ in 0..<7 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "-s", "-o", "/dev/null", health]
        let start = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        samples.append(seconds(ContinuousClock.now - start))
    }
    return median(samples)
}

func seconds(_ duration: Duration) -> Double { Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }
func median(_ values: [Double]) -> Double { let s = values.sorted(); return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2 }

let model = OpenAICompatibleModel(baseURL: baseURL, model: modelName, logger: Logger(label: "relay-model-bench", factory: { _ in SwiftLogNoOpLogHandler() }))
do {
    _ = try await model.servedModels()
} catch {
    print("relay-model-bench: skipped — \((error as? LanguageModelError)?.message ?? "\(error)")")
    exit(0)
}

print("relay-model-bench: \(modelName) at \(baseURL), \(rounds) rounds of curl and Relay alternating, up to \(maxTokens) tokens each")
_ = try curlSample()  // warm-up: loads the prompt into the server's cache for both sides
_ = try await relaySample(model)
var curl: [Sample] = [], relay: [Sample] = []
for _ in 0..<rounds {
    curl.append(try curlSample())
    relay.append(try await relaySample(model))
}
func row(_ name: String, _ samples: [Sample]) -> (ttft: Double, rate: Double) {
    let ttft = median(samples.map(\.firstToken)) * 1000, rate = median(samples.map(\.tokensPerSecond))
    print("  \(name.padding(toLength: 8, withPad: " ", startingAt: 0)) first token \(String(format: "%7.1f", ttft)) ms   \(String(format: "%6.1f", rate)) tokens/s   (\(samples.map { String($0.tokens) }.joined(separator: ",")) tokens)")
    return (ttft, rate)
}
let c = row("curl", curl), r = row("Relay", relay)
let start = try curlStartCost() * 1000
print(String(format: "  curl's own start (a whole curl run against /health): %.1f ms; curl's first token without it: %.1f ms", start, c.ttft - start))
print(String(format: "  ratio    first token Relay/curl %.3f (%.3f against curl without its start)   tokens/s Relay/curl %.3f   (1.000 = identical)",
             r.ttft / c.ttft, r.ttft / (c.ttft - start), r.rate / c.rate))
