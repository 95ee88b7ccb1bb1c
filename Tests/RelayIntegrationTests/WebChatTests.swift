import Foundation
import RelayTestKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real headless Chromium (Debian's `chromium-headless-shell`, which `make deps` installs).
enum WebBrowser {
    static let path: String? = {
        let candidates = [ProcessInfo.processInfo.environment["RELAY_TEST_BROWSER"], "/usr/bin/chromium-headless-shell", "/usr/bin/chromium"]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Helpers/web-chat-driver/drive.py").path
    }

    /// Opens `url` and runs `steps` in the page (see drive.py); the steps' results.
    static func drive(_ url: String, _ steps: [[String: Any]], scratch: String) throws -> [Any] {
        let file = scratch + "/steps-\(UUID().uuidString.prefix(8)).json"
        try JSONSerialization.data(withJSONObject: steps).write(to: URL(fileURLWithPath: file))
        let result = try run("/usr/bin/env", ["python3", driver, path ?? "", url, file])
        let object = jsonObject(result.text) ?? [:]
        if let error = object["error"] as? String {
            throw WatchTestError("the browser: \(error)\nresults so far: \(String(describing: object["results"]).prefix(3000))\n\(result.standardError.suffix(1000))")
        }
        return object["results"] as? [Any] ?? []
    }
}

/// The web group chat at `/`, in a real headless browser against the real `relay serve`, clicked
/// through as a person would: the DOM it renders is what the assertions read.
@Suite(.serialized, .enabled(if: WebBrowser.path != nil, "no headless Chromium: `apt-get install chromium-headless-shell` (make deps) to run the web chat's tests"))
struct WebChatTests {
    /// Each agent answers in its own words; Remy lists files first, Vera asks Wren for a revision.
    static let groupChatScript = """
        {"replies": [
          {"when": "say what llamas eat", "text": "**Llamas** are camelids from the Andes.\\n\\n- They hum when they are curious\\n- They eat grass and hay"},
          {"when": "[Previous Agent — Wren]", "text": "REVISION for Wren: say what llamas eat."},
          {"when": "[Previous Agent — Remy]", "text": "**Llamas** are camelids from the Andes.\\n\\n- They hum when they are curious"},
          {"when": "[Previous Agent — Paige]", "toolCalls": [{"name": "list_files", "arguments": {"path": "."}}]},
          {"when": "[Previous Agent — Paige]", "text": "- Llamas live in the Andes [general knowledge]\\n- They hum [general knowledge]"},
          {"text": "1. Find what llamas are\\n2. Write two short lines"}
        ]}
        """

    static func send(_ message: String) -> String {
        let literal = String(decoding: try! JSONSerialization.data(withJSONObject: [message]), as: UTF8.self).dropFirst().dropLast()
        return "(() => { const input = document.getElementById('input'); input.value = \(literal); document.getElementById('composer').requestSubmit(); return true; })()"
    }

    @Test func aMessageSentInThePageStreamsEachAgentsBubbleAsAGroupChat() throws {
        let s = try ServedWorkspace.scripted()
        try s.write("script.json", Self.groupChatScript)
        let served = try ServedWorkspace(s)
        let screenshot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/images/web-chat.png").path
        try FileManager.default.createDirectory(atPath: (screenshot as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let results = try WebBrowser.drive(served.base + "/", [
            ["wait": "document.getElementById('chat-list') !== null && document.readyState === 'complete'", "timeout": 20],
            ["do": Self.send("Tell me about llamas")],
            ["wait": "document.getElementById('status').textContent === 'done' && document.querySelectorAll('.message.agent').length >= 5", "timeout": 120],
            // The page redraws the finished turn from its transcript a moment after the end, and says so.
            ["wait": "document.getElementById('messages').dataset.shown", "timeout": 30],
            ["html": true],
            ["do": "document.getElementById('messages').scrollTop = 0; true"],
            ["screenshot": screenshot],
            ["do": "location.hash"],
            // On a phone the chat list folds above the chat.
            ["viewport": [390, 844]],
            ["wait": "document.getElementById('sidebar').getBoundingClientRect().width <= 390", "timeout": 20],
            ["screenshot": screenshot.replacingOccurrences(of: "web-chat.png", with: "web-chat-phone.png")],
        ], scratch: s.base)
        #expect(results[9] as? Bool == true, "the chat list fits a phone's width")
        let html = try #require(results[4] as? String)
        // Every agent: emoji avatar, name, and the colour as a CSS variable beside them.
        for (emoji, name, color) in [("📋", "Paige", "#4A90D9"), ("🔎", "Remy", "#2E9E6B"), ("✍️", "Wren", "#E67E22"), ("🔍", "Vera", "#9B59B6")] {
            #expect(html.contains("<div class=\"avatar\" aria-hidden=\"true\">\(emoji)</div>"), "\(name)'s avatar")
            #expect(html.contains("<span class=\"name\">\(name)</span>"), "\(name)'s name")
            #expect(html.lowercased().contains("--agent: \(color.lowercased())") || html.contains("--agent: rgb"), "\(name)'s colour")
        }
        #expect(html.contains("→ handed off to 🔎 Remy") && html.contains("→ handed off to ✍️ Wren") && html.contains("→ handed off to 🔍 Vera"))
        #expect(html.contains("(revision requested by Vera)"))
        // The tool call, collapsible, with its arguments and result.
        #expect(html.contains("<summary>🔧 list_files</summary>") && html.contains("{\"path\":\".\"}"))
        // Markdown as elements: bold and a list from the model's text.
        #expect(html.contains("<strong>Llamas</strong> are camelids from the Andes."))
        #expect(html.contains("<li>They eat grass and hay</li>"))
        #expect(html.contains("Tell me about llamas"), "the person's own bubble")
        #expect(!html.contains("\"event\":"), "no raw JSON on the page")
        let chat = try #require((results[7] as? String)?.replacingOccurrences(of: "#chat=", with: ""))
        #expect(s.contents("Chats/\(chat).md")?.contains("Tell me about llamas") == true, "an ordinary chat file")
    }

    @Test func theComposerOffersTheAgentsForAnAtMentionAndTheMessageGoesToThatAgentAlone() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        let typeMention = "(() => { const input = document.getElementById('input'); input.value = '@Wr'; input.selectionStart = input.selectionEnd = 3; input.dispatchEvent(new Event('input')); return true; })()"
        let results = try WebBrowser.drive(served.base + "/", [
            // The agents' names come from GET /v1/models once the page has loaded.
            ["wait": "document.readyState === 'complete'", "timeout": 20],
            ["wait": typeMention + " && !document.getElementById('mentions').hidden", "timeout": 20],
            ["do": "Array.from(document.querySelectorAll('#mentions li')).map(li => li.textContent)"],
            ["do": "document.getElementById('input').dispatchEvent(new KeyboardEvent('keydown', {key: 'Tab', bubbles: true, cancelable: true})); document.getElementById('input').value"],
            ["do": "(() => { const input = document.getElementById('input'); input.value += 'write one line about llamas'; document.getElementById('composer').requestSubmit(); return true; })()"],
            ["wait": "document.getElementById('status').textContent === 'done'", "timeout": 60],
            ["wait": "document.getElementById('messages').dataset.shown", "timeout": 30],
            ["do": "Array.from(document.querySelectorAll('.message.agent .name')).map(e => e.textContent)"],
        ], scratch: s.base)
        #expect(results[2] as? [String] == ["@Wren"], "\(results)")
        #expect(results[3] as? String == "@Wren ", "\(results)")
        #expect(results[7] as? [String] == ["Wren"], "only the agent mentioned answered: \(results)")
    }

    @Test func aFileDroppedOnThePageLandsInResearchAndItsRelayRunsOnce() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        try HTTPRunsTests.waitForWatcher(s, served)
        // What the browser hands the page when a person drops a file from their desktop.
        let drop = """
            (() => { const files = new DataTransfer(); files.items.add(new File(['Alpacas are smaller than llamas.\\n'], 'alpaca notes.md', {type: 'text/markdown'}));
            window.dispatchEvent(new DragEvent('drop', {dataTransfer: files, bubbles: true, cancelable: true})); return true; })()
            """
        let results = try WebBrowser.drive(served.base + "/", [
            ["wait": "document.readyState === 'complete'", "timeout": 20],
            ["do": drop],
            ["wait": "document.getElementById('messages').textContent.includes('Research/alpaca notes.md — the research relay will read it')", "timeout": 30],
        ], scratch: s.base)
        #expect(results.count == 3)
        #expect(s.contents("Research/alpaca notes.md") == "Alpacas are smaller than llamas.\n")
        try served.waitForRun(triggeredBy: "Research/alpaca notes.md")
        try HTTPRunsTests.waitForWatcher(s, served)
        let runs = (jsonObject(try served.curl("GET", "/runs").body)?["runs"] as? [[String: Any]]) ?? []
        let research = runs.filter { $0["source"] as? String == "Research/alpaca notes.md" }
        #expect(research.count == 1, "\(runs)")
        #expect(research.first?["state"] as? String == "done", "\(research)")
    }

    @Test func withATokenThePageAsksForItAndThenShowsTheChats() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s, environment: ["RELAY_API_TOKEN": "page-token"])
        let started = try served.curl("POST", "/runs", body: #"{"message": "First question", "chat": "guarded"}"#, headers: ["Authorization: Bearer page-token"])
        #expect(started.status == 202, "\(started)")
        let results = try WebBrowser.drive(served.base + "/", [
            ["wait": "document.getElementById('token-dialog').open", "timeout": 20],
            ["do": "document.querySelectorAll('#chat-list .chat').length"],
            ["do": "document.getElementById('token-input').value = 'page-token'; document.getElementById('token-form').requestSubmit(); true"],
            ["wait": "!document.getElementById('token-dialog').open && Array.from(document.querySelectorAll('#chat-list .chat')).some(b => b.textContent === 'guarded')", "timeout": 20],
        ], scratch: s.base)
        #expect(results[1] as? Int == 0, "nothing shown before the token")
    }

    @Test func htmlInAChatFileRendersAsTextAndAPersonsNewMessageInTheFileAppears() throws {
        let s = try ServedWorkspace.scripted()
        let served = try ServedWorkspace(s)
        let started = try served.curl("POST", "/runs", body: #"{"message": "First question", "chat": "visitors"}"#)
        let id = try #require(jsonObject(started.body)?["run"] as? String, "\(started)")
        _ = SSEReader.readToEnd(served.base + "/runs/\(id)/events")
        let hostile = #"<img src=x onerror="window.__pwned = 1"> and <script>window.__pwned = 2</script> **bold**"#
        let results = try WebBrowser.drive(served.base + "/#chat=visitors", [
            ["wait": "document.querySelectorAll('.message.agent').length >= 4", "timeout": 30],
            // With the page open, a person writes the next message at the end of the chat file.
            ["append": s.path("Chats/visitors.md"), "text": "\n" + hostile + "\n"],
            ["wait": "document.getElementById('messages').textContent.includes('onerror=\"window.__pwned = 1\"')", "timeout": 60],
            // The daemon's chat trigger answers it, and the page shows the answers too.
            ["wait": "document.querySelectorAll('.message.agent').length >= 8 && document.getElementById('stop').hidden", "timeout": 120],
            ["do": "JSON.stringify({pwned: window.__pwned === undefined ? null : window.__pwned, images: document.querySelectorAll('#messages img').length, scripts: document.querySelectorAll('#messages script').length, strong: Array.from(document.querySelectorAll('#messages strong')).map(e => e.textContent)})"],
        ], scratch: s.base)
        let third = results
        let verdict = try #require(jsonObject(third[4] as? String ?? ""), "\(third)")
        #expect(verdict["pwned"] is NSNull, "the markup in the file ran: \(verdict)")
        #expect(verdict["images"] as? Int == 0 && verdict["scripts"] as? Int == 0, "\(verdict)")
        #expect((verdict["strong"] as? [String])?.contains("bold") == true, "Markdown still renders: \(verdict)")
    }

    @Test func aPageReloadedMidTurnPicksTheStreamUpAndItsStopButtonCancelsTheRun() throws {
        let s = try ScratchWorkspace.relayInit()
        try s.useFourAgentRoster()
        let model = FakeModelServer(delay: 1.5, log: s.base + "/requests.log")
        try model.start()
        let served = try ServedWorkspace(s, environment: ["RELAY_MODEL_URL": model.baseURL])
        let results = try WebBrowser.drive(served.base + "/", [
            ["wait": "document.readyState === 'complete'", "timeout": 20],
            ["do": Self.send("Plan a picnic by the river")],
            ["wait": "document.querySelectorAll('.message.agent .meta').length >= 1", "timeout": 60],
            ["do": "window.__beforeReload = true; setTimeout(() => location.reload(), 10); true"],
            ["wait": "window.__beforeReload === undefined && document.readyState === 'complete' && location.hash.startsWith('#chat=')", "timeout": 20],
            // After the reload the page finds the running turn and follows it from its start.
            ["wait": "document.querySelectorAll('.message.agent').length >= 2 && document.querySelector('.message.agent .typing') !== null && !document.getElementById('stop').hidden", "timeout": 60],
            ["do": "document.getElementById('stop').click(); true"],
            ["wait": "document.getElementById('status').textContent === 'stopped'", "timeout": 30],
            ["do": "location.hash"],
        ], scratch: s.base)
        let chat = try #require((results[8] as? String)?.replacingOccurrences(of: "#chat=", with: ""))
        let runs = (jsonObject(try served.curl("GET", "/runs?chat=\(chat)").body)?["runs"] as? [[String: Any]]) ?? []
        #expect(runs.count == 1 && runs.first?["state"] as? String == "cancelled", "\(runs)")
        _ = model
    }
}

extension SSEReader {
    /// The whole stream of a run that ends.
    static func readToEnd(_ url: String) -> [Event] {
        guard let reader = try? SSEReader(url: url) else { return [] }
        return reader.read()
    }
}
