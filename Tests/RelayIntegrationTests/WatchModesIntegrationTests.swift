import Foundation
import RelayTestKit
import Testing

/// `relay watch` with routed and plan relays (issue 19): the real binary, real inotify, and the
/// fake model server (a Python test double that logs every request) — the model is not the point,
/// who is asked and how often is.
@Suite struct WatchModesIntegrationTests {
    /// The chat relay of the four-agent roster in `mode`, with `fields`; Wren has a routing rule.
    func useChatRelay(_ w: WatchedWorkspace, mode: String, fields: [String: Any] = [:]) throws {
        try w.scratch.useFourAgentRoster()
        var roster = try #require(try JSONSerialization.jsonObject(with: Data(ScratchWorkspace.fourAgentRoster.utf8)) as? [[String: Any]])
        for index in roster.indices where roster[index]["id"] as? String == "writer" {
            roster[index]["route"] = ["keywords": ["poem", "haiku"]]
        }
        try w.scratch.write("AgentConfiguration.json", String(decoding: try JSONSerialization.data(withJSONObject: roster), as: UTF8.self))
        let data = try Data(contentsOf: URL(fileURLWithPath: w.scratch.path("relay.json")))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var relays = object["relays"] as? [String: Any] ?? [:]
        relays["chat"] = ["roster": "AgentConfiguration.json", "input": "chat", "mode": mode].merging(fields) { _, new in new }
        object["relays"] = relays
        try w.scratch.write("relay.json", String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self))
    }

    /// The chat file once its turn has ended (the end marker written, nothing still working).
    func waitForTurnEnd(_ path: String, in w: WatchedWorkspace) throws -> String {
        try w.waitFor("a finished turn in \(path)") {
            let chat = (try? String(contentsOfFile: w.path(path), encoding: .utf8)) ?? ""
            return chat.contains("<!-- relay:end ") && !chat.contains("still working") ? chat : nil
        }
    }

    @Test func aChatMessageToARoutedRelayIsAnsweredByTheAgentItsRuleSelectsAndSaysWhy() throws {
        let w = try WatchedWorkspace(triggers: WatchRelayIntegrationTests.templateTriggers)
        try useChatRelay(w, mode: "route")
        let server = FakeModelServer(log: w.scratch.base + "/requests.log")
        try server.start()
        try w.start(environment: ["RELAY_MODEL_URL": server.baseURL])
        try w.write("Chats/llamas.md", "Write a haiku about llamas\n")
        let chat = try waitForTurnEnd("Chats/llamas.md", in: w)
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        // One agent, chosen by Wren's keyword: no classifier call, nobody else asked.
        #expect(server.requests.map(\.agent) == ["Wren"], "\(server.requests.map(\.agent))")
        #expect(chat.contains("### ✍️ Wren"), "\(chat)")
        #expect(chat.contains("selected by rule: Wren's keyword 'haiku'"), "the chat says who and why: \(chat)")
        #expect(!chat.contains("### 📋 Paige") && !chat.contains("### 🔍 Vera"))
        let transcript = try #require(try? String(contentsOfFile: w.path("Chats/llamas.json"), encoding: .utf8))
        let root = try #require(try JSONSerialization.jsonObject(with: Data(transcript.utf8)) as? [String: Any])
        let answers = (root["messages"] as? [[String: Any]] ?? []).filter { $0["role"] as? String == "agent" }
        #expect(answers.count == 1)
        #expect(answers.first?["selectedBy"] as? String == "rule: Wren's keyword 'haiku'", "\(answers)")

        // A message no rule matches goes to the first agent, and the chat says it fell back.
        try w.write("Chats/llamas.md", chat + "\nWhere do llamas live?\n")
        try server.waitForRequests(2)
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        let second = (try? String(contentsOfFile: w.path("Chats/llamas.md"), encoding: .utf8)) ?? ""
        #expect(server.requests.map(\.agent) == ["Wren", "Paige"], "\(server.requests.map(\.agent))")
        #expect(second.contains("selected by fallback: no mention or rule matched; the first agent answers"), "\(second)")
        w.stop()
    }

    @Test func aChatMessageToAPlanRelayIsAnsweredOnceWithItsWorkersInPlanOrder() throws {
        let w = try WatchedWorkspace(triggers: WatchRelayIntegrationTests.templateTriggers)
        try useChatRelay(w, mode: "plan", fields: ["coordinator": "writer", "parallel": 2])
        let server = FakeModelServer(log: w.scratch.base + "/requests.log")
        try server.start()
        try w.start(environment: ["RELAY_MODEL_URL": server.baseURL])
        try w.write("Chats/breeds.md", "Compare three llama breeds (no slow part)\n")
        let chat = try waitForTurnEnd("Chats/breeds.md", in: w)
        try w.waitUntilQueueIdle()
        try w.waitForCookie()
        // The planner once, three workers once each, the coordinator once: one run, and the
        // daemon's own writes to the chat file started no second one.
        let users = server.requests.map(\.user)
        #expect(server.requests.count == 5, "\(server.requests.map(\.agent))")
        #expect(users.filter { $0.contains("Split the request") }.count == 1)
        for (number, part) in ["first part", "second part", "third part"].enumerated() {
            #expect(users.filter { $0.contains("[Your Subtask — \(number + 1) of 3]:\n\(part)") }.count == 1, "worker \(number + 1) asked once")
        }
        #expect(users.filter { $0.contains("Workers — results in plan order") }.count == 1)
        let marks = ["> Subtask 1: first part", "> Subtask 2: second part", "> Subtask 3: third part", "### ✍️ Wren"].map { chat.range(of: $0)?.lowerBound }
        #expect(marks.allSatisfy { $0 != nil } && marks.map { $0! } == marks.map { $0! }.sorted(), "workers in plan order, then the answer: \(chat)")
        #expect(chat.components(separatedBy: "<!-- relay:turn ").count == 2, "one turn in the chat: \(chat)")
        #expect(try w.queue().filter { $0.state == "done" }.count == 1, "one trigger, done")
        w.stop()
    }
}
