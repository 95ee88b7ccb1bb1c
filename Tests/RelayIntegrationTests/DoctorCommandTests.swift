import Foundation
import RelayTestKit
import Testing

/// `relay doctor` as a person runs it: 0 healthy, 1 no server, 2 bad configuration — each with a
/// message that names the file, field or URL.
@Suite("relay doctor")
struct DoctorCommandTests {
    /// A port on 127.0.0.1 where nothing listens.
    static func closedPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func setModelSection(_ s: ScratchWorkspace, _ section: String) throws {
        let text = try #require(s.contents("relay.json"))
        let start = try #require(text.range(of: "\"model\": {"))
        let end = try #require(text.range(of: "},", range: start.upperBound..<text.endIndex))
        try text.replacingCharacters(in: start.lowerBound..<end.upperBound, with: "\"model\": " + section + ",")
            .write(toFile: s.path("relay.json"), atomically: true, encoding: .utf8)
    }

    @Test func aScriptedModelIsHealthyAndNamedAsScripted() throws {
        let s = try ScratchWorkspace.relayInit()
        try #"""
            {"repeat": true, "replies": [
              {"when": "get_time", "toolCalls": [{"name": "get_time"}]},
              {"when": "Count", "text": "1 2 3 4 5 6 7 8 9 10", "usage": {"promptTokens": 9, "completionTokens": 10}}
            ]}
            """#.write(toFile: s.path("script.json"), atomically: true, encoding: .utf8)
        try Self.setModelSection(s, #"{"provider": "scripted", "script": "script.json"}"#)
        let result = try run(Binaries.relay, ["doctor", "-w", s.root, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any])
        #expect(report["healthy"] as? Bool == true && report["provider"] as? String == "scripted")
        #expect((report["describedAs"] as? String)?.hasPrefix("scripted model (") == true)
        #expect(report["nativeToolCalls"] as? Bool == true && report["completionTokens"] as? Int == 10)
        #expect(report["configuration"] as? String == s.path("relay.json"))

        let text = try run(Binaries.relay, ["doctor", "-w", s.root]).text
        #expect(text.contains("replies come from a file, not a model") && text.contains("healthy"))

        let quick = try run(Binaries.relay, ["doctor", "-w", s.root, "--quick", "--json"])
        let quickReport = try #require(try JSONSerialization.jsonObject(with: quick.standardOutput) as? [String: Any])
        #expect(quick.status == 0 && quickReport["answers"] as? Bool == true)
        #expect(quickReport["nativeToolCalls"] == nil && quickReport["tokensPerSecond"] == nil, "--quick skips the probes")
    }

    @Test func doctorReportsHowManyRequestsTheServerTakesAtOnceAndWarnsWhenAPlanWantsMore() throws {
        let s = try ScratchWorkspace.relayInit()
        let server = FakeModelServer(log: s.base + "/requests.log")  // answers /props with 2 slots, as llama-server -np 2
        try server.start()
        let environment = ["RELAY_MODEL_URL": server.baseURL]
        let quick = try run(Binaries.relay, ["doctor", "-w", s.root, "--quick", "--json"], environment: environment)
        let report = try #require(try JSONSerialization.jsonObject(with: quick.standardOutput) as? [String: Any])
        #expect(report["concurrentRequests"] as? Int == 2, "\(quick.text)")
        let text = try run(Binaries.relay, ["doctor", "-w", s.root, "--quick"], environment: environment).text
        #expect(text.contains("Slots          2 requests at once"), "\(text)")

        let data = try Data(contentsOf: URL(fileURLWithPath: s.path("relay.json")))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["relays"] = ["chat": ["roster": "AgentConfiguration.json", "mode": "plan", "parallel": 4]]
        try s.write("relay.json", String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        let wanting = try run(Binaries.relay, ["doctor", "-w", s.root, "--quick"], environment: environment).text
        #expect(wanting.contains("fewer than the 4 parallel workers relay.json asks for"), "\(wanting)")
    }

    @Test func noServerExitsWith1AndNamesTheURLAndWhatToDo() throws {
        let url = "http://127.0.0.1:\(Self.closedPort())/v1"
        let result = try run(Binaries.relay, ["doctor"], environment: ["RELAY_MODEL_URL": url], in: FileManager.default.temporaryDirectory.path)
        #expect(result.status == 1)
        #expect(result.standardError.contains("no model server at \(url)") && result.standardError.contains("make model"))
        #expect(result.text.contains("Overrides      RELAY_MODEL_URL") && result.text.contains("does not answer"))
        #expect(result.text.contains("defaults (not in a workspace)"))
    }

    @Test func aMalformedModelSectionExitsWith2NamingFileLineAndField() throws {
        let s = try ScratchWorkspace.relayInit()
        try Self.setModelSection(s, "{\n    \"provider\": \"openai-compatible\",\n    \"toolMode\": \"sometimes\"\n  }")
        let lines = try #require(s.contents("relay.json")).components(separatedBy: "\n")
        let line = try #require(lines.firstIndex { $0.contains("\"toolMode\"") }) + 1
        let result = try run(Binaries.relay, ["doctor", "-w", s.root])
        #expect(result.status == 2)
        #expect(result.standardError.contains("\(s.path("relay.json")):\(line): model.toolMode: \"sometimes\" is not one of"))
    }

    @Test func anthropicWithoutAKeyExitsWith2NamingTheVariable() throws {
        let s = try ScratchWorkspace.relayInit()
        try Self.setModelSection(s, #"{"provider": "anthropic", "model": "claude-sonnet-4-5"}"#)
        let result = try run(Binaries.relay, ["doctor", "-w", s.root], environment: ["ANTHROPIC_API_KEY": ""])
        #expect(result.status == 2 && result.standardError.contains("ANTHROPIC_API_KEY"))
    }

    /// The watcher needs one inotify watch per folder: doctor shows the kernel's limits (as
    /// /proc has them) and what this user's processes use — counting this test's own instance.
    @Test func doctorReportsTheKernelsInotifyLimitsAndThisUsersWatchesInUse() throws {
        let s = try ScratchWorkspace.relayInit()
        try #"{"repeat": true, "replies": [{"text": "1 2 3"}]}"#.write(toFile: s.path("script.json"), atomically: true, encoding: .utf8)
        try Self.setModelSection(s, #"{"provider": "scripted", "script": "script.json"}"#)
        // An inotify instance of this user's, watching three folders.
        let instance = inotify_init1(Int32(IN_CLOEXEC))
        try #require(instance >= 0)
        defer { close(instance) }
        for name in ["a", "b", "c"] {
            try FileManager.default.createDirectory(atPath: s.path("watched/" + name), withIntermediateDirectories: true)
            #expect(inotify_add_watch(instance, s.path("watched/" + name), UInt32(IN_CREATE)) >= 0)
        }
        func proc(_ name: String) -> Int? {
            (try? String(contentsOfFile: "/proc/sys/fs/inotify/" + name, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }

        let result = try run(Binaries.relay, ["doctor", "-w", s.root, "--quick", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any])
        let inotify = try #require(report["inotify"] as? [String: Any], "\(String(decoding: result.standardOutput, as: UTF8.self))")
        let limits = try #require(inotify["limits"] as? [String: Any])
        #expect(limits["maxUserWatches"] as? Int == proc("max_user_watches"))
        #expect(limits["maxUserInstances"] as? Int == proc("max_user_instances"))
        #expect(limits["maxQueuedEvents"] as? Int == proc("max_queued_events"))
        let usage = try #require(inotify["usage"] as? [String: Any])
        #expect((usage["instances"] as? Int ?? 0) >= 1 && (usage["watches"] as? Int ?? 0) >= 3, "this test's own watches are counted: \(usage)")

        let text = try run(Binaries.relay, ["doctor", "-w", s.root, "--quick"]).text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("inotify") }, "\(text)")
        // The limit that binds: the user namespace's, where it is lower.
        let namespace = (try? String(contentsOfFile: "/proc/sys/user/max_inotify_watches", encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let binding = [proc("max_user_watches"), namespace].compactMap { $0 }.min() ?? -1
        #expect(line.contains("of \(binding) watches in use (fs.inotify.max_user_watches)"), "\(line)")
        #expect(line.contains("queue \(proc("max_queued_events") ?? -1) events"), "\(line)")
    }
}
