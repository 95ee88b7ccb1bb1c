import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

/// Dropped documents read by the real converters (pandoc, pdftotext) or by a stand-in that
/// hangs: child processes, so integration tests. What needs no converter is in RelayEngineTests
/// (`DroppedFileTests`).
@Suite struct DroppedFileConverterTests {
    @Test func htmlBecomesTextWithPandocOrByStrippingTags() throws {
        let scratch = try ScratchWorkspace.forRelays()
        try scratch.write("Research/page.html", "<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Llamas</h1><p>They hum &amp; spit.</p></body></html>")
        guard case .text(let text, let note) = InputConverter.text(ofFileAt: scratch.workspace.root + "/Research/page.html", path: "Research/page.html") else {
            Issue.record("HTML was not read")
            return
        }
        #expect(text.contains("Llamas") && text.contains("They hum & spit."))
        #expect(!text.contains("<") && !text.contains("alert"))
        #expect(note != nil)
        // Without pandoc on the search path: the tags are stripped, and the note says so.
        guard case .text(let stripped, let how) = InputConverter.text(ofFileAt: scratch.workspace.root + "/Research/page.html", path: "Research/page.html", search: []) else {
            Issue.record("HTML was not read without pandoc")
            return
        }
        #expect(stripped.contains("They hum & spit.") && !stripped.contains("alert"))
        #expect(how?.contains("install pandoc") == true)
    }

    @Test func aConverterThatHangsIsStoppedAndTheFileSkipped() throws {
        let scratch = try ScratchWorkspace.forRelays()
        // A pdftotext that never finishes, as a real one can on a hostile document.
        let tools = scratch.base + "/tools"
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        // It says where it is, starts a child of its own and waits for it, then would leave a
        // mark if it ever got to the end.
        let marks = scratch.base + "/marks"
        try "#!/bin/sh\necho $$ > \(marks).pid\nsleep 30 </dev/null >/dev/null 2>&1 &\necho $! > \(marks).child\nwait\ntouch \(marks).finished\n"
            .write(toFile: tools + "/pdftotext", atomically: false, encoding: .utf8)
        chmod(tools + "/pdftotext", 0o755)
        FileManager.default.createFile(atPath: scratch.workspace.root + "/paper.pdf", contents: Data("%PDF-1.4\n".utf8))
        let outcome = InputConverter.text(ofFileAt: scratch.workspace.root + "/paper.pdf", path: "paper.pdf", search: [tools], timeout: 0.5)
        #expect(outcome == .skipped("paper.pdf: pdftotext took longer than 0 s and was stopped, so it was not read"))
        // Stopped, not waited for: the converter never reached its end and is gone.
        #expect(!FileManager.default.fileExists(atPath: marks + ".finished"), "it waited for the converter to finish")
        let pid = try #require(pid_t(((try? String(contentsOfFile: marks + ".pid", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, 0) != 0, "the converter (pid \(pid)) is still running")
        let child = try #require(pid_t(((try? String(contentsOfFile: marks + ".child", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        // Its child goes with it (the whole process group is stopped); it was not waited for. A
        // SIGKILLed process still shows its last state for a moment under load: its end is the
        // event (a pidfd), waited for well short of the 30 s it would sleep had it not been stopped.
        func state() -> Substring? {
            (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
        }
        let ended = try FileEvents.waitForExit(ofPID: child, guardSeconds: 20)
        #expect(ended, "the converter's child (pid \(child)) is still running (state \(state() ?? "gone"))")
    }

    @Test(.enabled(if: InputConverter.executable("pdftotext") != nil, "pdftotext is not installed — `make deps` installs poppler-utils"))
    func aPDFIsReadWithPdftotext() async throws {
        let scratch = try ScratchWorkspace.forRelays()
        try FileManager.default.createDirectory(atPath: scratch.workspace.root + "/Research", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: scratch.workspace.root + "/Research/llamas.pdf", contents: Data(Self.pdf(saying: "Llamas hum when content.")))
        let model = TestModel([.text("plan"), .text("facts"), .text("Summary: llamas hum."), .text("APPROVED")])
        let engine = scratch.engine(model)
        let manifest = try #require(try engine.prepare(trigger: "research", path: "Research/llamas.pdf", hash: scratch.workspace.hash("Research/llamas.pdf").hex))
        #expect(manifest.inputNote?.contains("converted from PDF with pdftotext") == true)
        try await scratch.run(engine, manifest.id)
        #expect(model.received[0].user.contains("Llamas hum when content."))
        #expect(!model.received[0].user.contains("%PDF"))
        #expect(scratch.contents("Research/llamas/summary.md") == "Summary: llamas hum.\n")
    }

    @Test(.enabled(if: InputConverter.executable("pandoc") != nil, "pandoc is not installed — `make deps` installs it"))
    func aDOCXIsReadWithPandoc() throws {
        let pandoc = try #require(InputConverter.executable("pandoc"))
        let scratch = try ScratchWorkspace.forRelays()
        try scratch.write("notes.md", "# Llamas\n\nThey hum when content.\n")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pandoc)
        process.arguments = [scratch.workspace.root + "/notes.md", "-o", scratch.workspace.root + "/notes.docx"]
        try process.run()
        process.waitUntilExit()
        guard case .text(let text, let note) = InputConverter.text(ofFileAt: scratch.workspace.root + "/notes.docx", path: "notes.docx") else {
            Issue.record("DOCX was not read")
            return
        }
        #expect(text.contains("They hum when content."))
        #expect(note == "converted from DOCX file with pandoc")
    }

    /// A one-page PDF whose page shows `text` (Helvetica), with a correct cross-reference table.
    static func pdf(saying text: String) -> [UInt8] {
        let content = "BT /F1 24 Tf 72 720 Td (\(text)) Tj ET"
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
        var pdf = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(pdf.utf8.count)
            pdf += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = pdf.utf8.count
        pdf += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { pdf += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n" }
        pdf += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(pdf.utf8)
    }
}
