import Foundation
import RelayTestKit
import Testing

/// `relay mcp` (issue 30): the real binary over stdio, driven by raw JSON-RPC lines and by the
/// MCP Python SDK from PyPI — a client nobody on Relay wrote.
@Suite struct MCPServerTests {
    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/MCPClient/relay_mcp_client.py"
    static let hasMCPSDK = (try? run("/usr/bin/env", ["python3", "-c", "import mcp.client.stdio"]).status) == 0

    /// Sends `lines` to `relay mcp` and closes its input; the server answers them all, then exits.
    func exchange(_ root: String, _ lines: [String]) throws -> (responses: [[String: Any]], run: Run) {
        let result = try run(Binaries.relay, ["mcp", "-w", root], input: Data((lines.joined(separator: "\n") + "\n").utf8))
        let responses = result.text.split(separator: "\n").map { line -> [String: Any] in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? ["not JSON": String(line)]
        }
        return (responses, result)
    }

    func response(_ responses: [[String: Any]], id: Int) -> [String: Any]? {
        responses.first { ($0["id"] as? Int) == id }
    }

    @Test func theServerNegotiatesTheProtocolRevisionAndAnswersBadMessagesWithJSONRPCErrors() throws {
        let s = try ScratchWorkspace.relayInit()
        let (responses, result) = try exchange(s.root, [
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{}}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"path":"context.md"}}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#,
            #"{"jsonrpc":"2.0","id":8,"method":"ping"}"#,
            "this is not json",
            #"[{"jsonrpc":"2.0","id":9,"method":"ping"}]"#,
            #"{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"relay://workspace/../etc/passwd"}}"#,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(responses.allSatisfy { $0["not JSON"] == nil }, "standard output holds only JSON-RPC lines: \(result.text)")
        let old = response(responses, id: 1)?["result"] as? [String: Any]
        #expect(old?["protocolVersion"] as? String == "2024-11-05", "a revision the server speaks is kept")
        let oldTools = (response(responses, id: 2)?["result"] as? [String: Any])?["tools"] as? [[String: Any]] ?? []
        #expect(oldTools.count == 11)
        #expect(oldTools.allSatisfy { $0["outputSchema"] == nil && $0["annotations"] == nil }, "2024-11-05 knows neither")
        #expect((response(responses, id: 3)?["result"] as? [String: Any])?["protocolVersion"] as? String == "2025-11-25", "an unknown one gets the newest")
        let newTools = (response(responses, id: 4)?["result"] as? [String: Any])?["tools"] as? [[String: Any]] ?? []
        #expect(newTools.allSatisfy { $0["outputSchema"] != nil && $0["annotations"] != nil })
        let read = response(responses, id: 6)?["result"] as? [String: Any]
        #expect(read?["structuredContent"] == nil, "2025-03-26 has no structuredContent; the text block carries the result")
        #expect(((read?["content"] as? [[String: Any]])?.first?["text"] as? String)?.contains("#") == true)
        #expect((response(responses, id: 7)?["error"] as? [String: Any])?["code"] as? Int == -32601)
        #expect(response(responses, id: 8)?["result"] != nil)
        let errors = responses.filter { $0["id"] is NSNull }.compactMap { ($0["error"] as? [String: Any])?["code"] as? Int }
        #expect(errors.sorted() == [-32700, -32600], "a line that is not JSON, and a batch: \(responses)")
        #expect((response(responses, id: 10)?["error"] as? [String: Any])?["code"] as? Int == -32002)
    }

    @Test(.enabled(if: hasMCPSDK, "needs the MCP Python SDK (make deps runs pip install mcp)"))
    func theMCPPythonSDKCallsEveryToolAndHostilePathsChangeNothing() throws {
        let s = try ServedWorkspace.scripted()
        let outside = s.base + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try "outside\n".write(toFile: outside + "/keep.md", atomically: true, encoding: .utf8)
        let result = try run("/usr/bin/env", ["python3", Self.client, Binaries.relay, s.root, outside, "full"])
        let log = (try? String(contentsOfFile: s.base + "/mcp-server.log", encoding: .utf8)) ?? ""
        try #require(result.status == 0, "\(result.standardError)\nserver log:\n\(log.suffix(3000))")
        let seen = try #require(jsonObject(result.text.split(separator: "\n").last.map(String.init) ?? ""), "\(result.text)")

        #expect(seen["protocolVersion"] as? String == "2025-11-25")
        #expect(seen["serverName"] as? String == "relay")
        let tools = seen["tools"] as? [String: [String: Any]] ?? [:]
        #expect(Set(tools.keys) == ["read", "write", "append", "list", "history", "restore", "edit", "update_context", "search", "ask", "runs"])
        #expect(tools.values.allSatisfy { $0["hasOutputSchema"] as? Bool == true })
        for name in ["read", "list", "history", "search", "runs"] { #expect(tools[name]?["readOnly"] as? Bool == true, "\(name)") }
        for name in ["write", "restore", "edit", "update_context"] { #expect(tools[name]?["destructive"] as? Bool == true, "\(name)") }
        #expect((seen["resources"] as? [String])?.contains("relay://workspace/context.md") == true)
        #expect((seen["contextResource"] as? String)?.isEmpty == false)

        let calls = seen["calls"] as? [String: [String: Any]] ?? [:]
        for (label, call) in calls where label != "edit-stale" { #expect(call["isError"] as? Bool == false, "\(label): \(call["text"] ?? "")") }
        func structured(_ label: String) -> [String: Any] { calls[label]?["structured"] as? [String: Any] ?? [:] }
        #expect(structured("read")["text"] as? String == "hello from mcp\n")
        #expect(structured("read")["version"] as? String == structured("write")["version"] as? String)
        #expect((calls["read"]?["text"] as? String) == "hello from mcp\n", "the text block carries the same")
        #expect(((structured("list")["entries"] as? [[String: Any]]) ?? []).contains { $0["path"] as? String == "notes/mcp.md" })
        let stale = calls["edit-stale"] ?? [:]
        #expect(stale["isError"] as? Bool == true, "a stale expected version is refused")
        #expect((stale["text"] as? String)?.contains(seen["versionAfterEdit"] as? String ?? "?") == true, "the refusal names the current version: \(stale["text"] ?? "")")
        #expect(seen["staleEditChangedNothing"] as? Bool == true)
        // The file's creation, and the edit that replaced (and kept) what the append left.
        let versions = (structured("history")["versions"] as? [[String: Any]]) ?? []
        #expect(versions.count == 2, "\(versions)")
        #expect(versions.first?["version"] as? String == structured("read-again")["version"] as? String && versions.first?["kept"] as? Bool == true)
        #expect(seen["afterRestore"] as? String == "hello from mcp\na second line\n")
        let context = try String(contentsOfFile: s.path("context.md"), encoding: .utf8)
        #expect(context.contains("## From MCP\n\nLlamas hum when they are content.\n"))
        #expect(((structured("search")["lines"] as? [[String: Any]]) ?? []).contains { $0["path"] as? String == "context.md" })
        #expect((calls["search"]?["text"] as? String)?.contains("context.md:") == true, "lines come with path:line")
        #expect(structured("runs-before")["total"] as? Int == 0)
        #expect((structured("ask")["answer"] as? String)?.hasPrefix("Llamas are camelids from the Andes.") == true, "\(structured("ask"))")
        let chat = structured("ask")["chatFile"] as? String ?? "?"
        #expect(FileManager.default.fileExists(atPath: s.path(chat)), "the turn is in \(chat)")
        #expect(structured("runs-after")["total"] as? Int == 1)
        #expect(((structured("runs-after")["runs"] as? [[String: Any]])?.first?["id"] as? String) == structured("ask")["runId"] as? String)

        for (label, call) in seen["badArguments"] as? [String: [String: Any]] ?? [:] {
            #expect(call["isError"] as? Bool == true, "bad arguments (\(label)) are a tool error the model can read")
        }
        let hostile = seen["hostile"] as? [String: [String: Any]] ?? [:]
        #expect(hostile.count == 59)
        for (label, call) in hostile { #expect(call["isError"] as? Bool == true, "\(label) was not refused: \(call["text"] ?? "")") }
        #expect(seen["hostileChangedNothing"] as? Bool == true)
        #expect((seen["escapedFiles"] as? [String])?.isEmpty == true)
        #expect(seen["toldOfChange"] as? Bool == true, "a subscribed resource changed by a person is notified")

        let race = seen["race"] as? [String: Any] ?? [:]
        #expect((race["saves"] as? Int ?? 0) >= 20)
        #expect((race["lostSaves"] as? [Int])?.isEmpty == true, "every save of the person survived the MCP edits: \(race)")
        #expect((race["editErrors"] as? [String])?.isEmpty == true, "\(race)")
        #expect(race["lastEditKept"] as? Bool == true)
    }

    @Test(.enabled(if: hasMCPSDK, "needs the MCP Python SDK (make deps runs pip install mcp)"))
    func aFileWrittenIntoResearchThroughMCPStartsTheResearchRelayOnce() throws {
        let w = try WatchedWorkspace(triggers: WatchRelayIntegrationTests.templateTriggers)
        try w.scratch.useFourAgentRoster()
        let server = FakeModelServer(log: w.scratch.base + "/requests.log")
        try server.start()
        try w.start(environment: ["RELAY_MODEL_URL": server.baseURL])
        let outside = w.scratch.base + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let result = try run("/usr/bin/env", ["python3", Self.client, Binaries.relay, w.root, outside, "write",
                                              "Research/alpacas.md", "# Alpacas\n\nAlpacas are shorn once a year.\n"])
        try #require(result.status == 0, "\(result.standardError)")
        try w.waitFor("Research/alpacas/summary.md") {
            FileManager.default.fileExists(atPath: w.path("Research/alpacas/summary.md")) ? () : nil
        }
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        #expect(server.requests.count == 4, "one run of four agents: \(server.requests.map(\.agent))")
        #expect(server.requests.first?.user.contains("Alpacas are shorn once a year.") == true)
        let runs = try run(Binaries.relay, ["runs", "-w", w.root, "--json"])
        let listed = (try? JSONSerialization.jsonObject(with: Data(runs.text.utf8))) as? [[String: Any]] ?? []
        #expect(listed.filter { $0["source"] as? String == "Research/alpacas.md" }.count == 1, "\(runs.text)")
        w.stop()
    }
}
