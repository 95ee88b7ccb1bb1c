import Foundation
import WorkspaceCore

/// Turns a dropped file into text a model can read, or says why it cannot: text files as they
/// are; PDF through `pdftotext` (poppler-utils); HTML, DOCX, ODT, EPUB and RTF through `pandoc`
/// (HTML falls back to stripping tags when pandoc is absent); anything else binary is skipped.
/// Binary junk never reaches a model.
///
/// For example:
/// ```swift
/// switch InputConverter.text(ofFileAt: "/ws/Research/paper.pdf", path: "Research/paper.pdf") {
/// case .text(let text, let note): …  // note: "converted from PDF with pdftotext"
/// case .skipped(let reason): …       // reason: "Research/paper.pdf is a PDF and pdftotext is not installed (apt-get install poppler-utils)"
/// }
/// ```
enum InputConverter {
    enum Outcome: Equatable {
        case text(String, note: String?)
        case skipped(String)
    }

    /// The most bytes read from a text file or a converter (8 MiB); a model sees far less.
    static let readLimit = 8 << 20

    /// How long a converter may run before it is stopped and the file skipped.
    static let defaultTimeout: TimeInterval = 120

    static func text(ofFileAt absolute: String, path: String, search: [String]? = nil, timeout: TimeInterval = defaultTimeout) -> Outcome {
        guard let handle = FileHandle(forReadingAtPath: absolute) else { return .skipped("\(path) cannot be opened") }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: readLimit)) ?? Data()
        return text(head: [UInt8](head), path: path, file: { absolute }, search: search, timeout: timeout)
    }

    /// The same for bytes already read (the bytes a trigger settled with): text is decoded from
    /// them; a converter gets a private copy of them in `copyFolder`, removed afterwards, never
    /// the workspace file (which may hold newer bytes by now).
    static func text(ofBytes bytes: [UInt8], path: String, copyFolder: String, search: [String]? = nil,
                     timeout: TimeInterval = defaultTimeout) -> Outcome {
        var copy: String?
        defer { if let copy { _ = try? StateFile.remove(copy) } }
        return text(head: Array(bytes.prefix(readLimit)), path: path, file: {
            let name = copyFolder + "/settled-" + UUID().uuidString + "-" + (path.split(separator: "/").last.map(String.init) ?? "file")
            do {
                try StateFile.makeFolders(copyFolder)
                try StateFile.create(name, with: bytes, mode: 0o600, durable: false)
            } catch {
                return nil
            }
            copy = name
            return name
        }, search: search, timeout: timeout)
    }

    /// `file` gives the path a converter reads (nil: it could not be made).
    private static func text(head bytes: [UInt8], path: String, file: () -> String?, search: [String]?, timeout: TimeInterval) -> Outcome {
        let lower = path.lowercased()
        let ext = lower.split(separator: ".").count > 1 ? String(lower.split(separator: ".").last!) : ""

        if bytes.starts(with: Array("%PDF".utf8)) || ext == "pdf" {
            guard let absolute = file() else { return .skipped("\(path) could not be copied for pdftotext") }
            return convert(absolute, path: path, kind: "a PDF", tool: "pdftotext", arguments: ["-layout", "-enc", "UTF-8", absolute, "-"],
                           package: "poppler-utils", search: search, timeout: timeout)
        }
        let pandocFormats = ["docx": "docx", "odt": "odt", "epub": "epub", "rtf": "rtf", "html": "html", "htm": "html"]
        if let format = pandocFormats[ext] {
            guard let absolute = file() else { return .skipped("\(path) could not be copied for pandoc") }
            let outcome = convert(absolute, path: path, kind: "a \(ext.uppercased()) file", tool: "pandoc",
                                  arguments: Self.pandocArguments(from: format, file: absolute), package: "pandoc", search: search,
                                  timeout: timeout)
            if case .skipped = outcome, format == "html", let html = String(validating: bytes, as: UTF8.self) {
                return .text(strippingTags(html), note: "HTML read without pandoc (tags stripped); install pandoc for better text")
            }
            return outcome
        }
        if bytes.isEmpty { return .text("", note: nil) }
        if bytes.contains(0) { return .skipped("\(path) is binary (\(kind(of: bytes, ext: ext))); only text, PDF, HTML, DOCX, ODT, EPUB and RTF are read") }
        guard let text = String(validating: bytes, as: UTF8.self) ?? validPrefix(bytes, truncated: bytes.count == readLimit) else {
            return .skipped("\(path) is not UTF-8 text (\(kind(of: bytes, ext: ext)))")
        }
        let truncated = bytes.count == readLimit ? "only the first \(readLimit >> 20) MiB read" : nil
        if CSVTable.isTable(path), truncated == nil, let table = CSVTable.markdown(text, separator: ext == "tsv" ? "\t" : ",") {
            return .text(table, note: nil)
        }
        return .text(text, note: truncated)
    }

    /// A truncated read may end inside a character: accept the text up to it.
    private static func validPrefix(_ bytes: [UInt8], truncated: Bool) -> String? {
        guard truncated else { return nil }
        for cut in 1...3 where bytes.count > cut {
            if let text = String(validating: bytes.dropLast(cut), as: UTF8.self) { return text }
        }
        return nil
    }

    private static func kind(of bytes: [UInt8], ext: String) -> String {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "a PNG image" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "a JPEG image" }
        if bytes.starts(with: Array("GIF8".utf8)) { return "a GIF image" }
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "a ZIP archive" }
        if bytes.starts(with: [0x7F, 0x45, 0x4C, 0x46]) { return "an executable" }
        return ext.isEmpty ? "unknown binary data" : "a .\(ext) file"
    }

    static func executable(_ tool: String, search: [String]? = nil) -> String? {
        let folders = search ?? (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        return folders.map { $0 + "/" + tool }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private static func convert(_ absolute: String, path: String, kind: String, tool: String, arguments: [String], package: String,
                                search: [String]?, timeout: TimeInterval) -> Outcome {
        guard let executable = executable(tool, search: search) else {
            return .skipped("\(path) is \(kind) and \(tool) is not installed (apt-get install \(package)), so it was not read")
        }
        // A document that sends the converter into a loop must not hold the relay forever: past
        // the timeout its whole process group is killed (a child it started would keep the
        // output pipe open). Its output is read while it runs, so a big document cannot fill
        // the pipe and stall it.
        let finished: ChildProcess.Finished
        do { finished = try ChildProcess.run([executable] + arguments, timeout: .milliseconds(Int64(timeout * 1000))) } catch let error as WorkspaceError {
            return .skipped("\(path): \(tool) could not be started (\(error.message))")
        } catch {
            return .skipped("\(path): \(tool) could not be started (\(error))")
        }
        if finished.timedOut {
            return .skipped("\(path): \(tool) took longer than \(Int(timeout)) s and was stopped, so it was not read")
        }
        guard finished.status == 0 else {
            let message = String(decoding: finished.errors.prefix(300), as: UTF8.self)
            return .skipped("\(path): \(tool) failed (status \(finished.status)): \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let data = finished.output
        let text = String(decoding: data.prefix(readLimit), as: UTF8.self)
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return .skipped("\(path) is \(kind) with no text in it (\(tool) found none; a scanned document needs OCR)")
        }
        return .text(text, note: "converted from \(kind.replacingOccurrences(of: "a ", with: "")) with \(tool)")
    }

    /// Crude HTML to text: drop scripts, styles and tags, decode the common entities.
    static func strippingTags(_ html: String) -> String {
        var text = html.replacingOccurrences(of: "(?is)<(script|style)[^>]*>.*?</\\1>", with: " ", options: .regularExpression)
        text = text.replacingOccurrences(of: "(?i)<(br|/p|/div|/h[1-6]|/li|/tr)[^>]*>", with: "\n", options: .regularExpression)
        text = text.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
        for (entity, character) in [("&nbsp;", " "), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&")] {
            text = text.replacingOccurrences(of: entity, with: character)
        }
        text = text.replacingOccurrences(of: "[ \t]+", with: " ", options: .regularExpression)
        return text.replacingOccurrences(of: "\n\\s*\n+", with: "\n\n", options: .regularExpression).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// pandoc's arguments for a document of `format`: an HTML page as Markdown (headings stay
    /// headings, a table stays a table of rows the engine reads with its header — as plain
    /// text a timetable became columns of times without their header), its layout boxes and
    /// raw HTML left out; other formats as plain text.
    static func pandocArguments(from format: String, file: String) -> [String] {
        format == "html"
            ? ["--from", "html-native_divs-native_spans", "--to", "gfm-raw_html", "--wrap", "none", file]
            : ["--from", format, "--to", "plain", "--wrap", "none", file]
    }
}
