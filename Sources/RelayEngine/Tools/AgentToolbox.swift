import Foundation
import LanguageModels
import WorkspaceCore

/// A file a run changed: recorded in the journal, checked by replay.
struct FileEffect: Sendable, Equatable {
    enum Mode: String { case write, update, append }
    var path: String
    var mode: Mode
    /// The version it replaced (nil: the file was new, or an append).
    var before: String?
    /// The whole file's hash after a write or update; the appended bytes' hash after an append.
    var after: String
}

/// The outcome of one tool call, as the model sees it.
struct ToolOutcome: Sendable, Equatable {
    var result: String
    var isError: Bool
    var effects: [FileEffect] = []

    static func failure(_ message: String) -> ToolOutcome { ToolOutcome(result: "error: " + message, isError: true) }
}

/// The tools agents can call, their descriptions for the model, and what they do. Every path
/// goes through the workspace's sandbox; a refused path, a missing argument or a tool the agent
/// lacks comes back to the model as a clear `error: …` result, never as a crash.
struct AgentToolbox {
    let workspace: Workspace

    /// What the tools' schemas may name: the other agents, and the workspace's paths when few.
    struct Names: Equatable {
        var agents: [String] = []
        var files: [String]?
        var folders: [String]?
    }

    /// A tool's description and argument schema. Where the choices are known and few — the
    /// agents a revision can go to, the files there are — the schema lists them (`enum`), so a
    /// model answering under a grammar (structured tool mode) cannot name one that does not exist.
    static func definition(_ tool: AgentTool, names: Names = Names()) -> ToolDefinition {
        func string(_ description: String, choices: [String]? = nil) -> JSONValue {
            var property: [String: JSONValue] = ["type": "string", "description": .string(description)]
            if let choices, !choices.isEmpty { property["enum"] = .array(choices.map { .string($0) }) }
            return .object(property)
        }
        func schema(_ properties: [(String, JSONValue)], required: [String]) -> JSONValue {
            ["type": "object", "properties": .object(Dictionary(uniqueKeysWithValues: properties)), "required": .array(required.map { .string($0) })]
        }
        switch tool {
        case .readFile:
            return ToolDefinition(name: tool.rawValue, description: "Read a text file of the workspace, e.g. context.md or Research/notes.md.",
                                  parameters: schema([("path", string("The file's path inside the workspace.", choices: names.files))], required: ["path"]))
        case .listFiles:
            return ToolDefinition(name: tool.rawValue, description: "List the files and folders in a folder of the workspace.",
                                  parameters: schema([("path", string("The folder, e.g. \".\" or \"Research\".", choices: names.folders))], required: ["path"]))
        case .searchFiles:
            return ToolDefinition(name: tool.rawValue, description: "Find lines containing a word or phrase in the workspace's text files.",
                                  parameters: schema([("query", string("The text to look for (any case).")), ("path", string("Optional folder to search in.", choices: names.folders))], required: ["query"]))
        case .writeFile:
            return ToolDefinition(name: tool.rawValue, description: "Create or replace a text file of the workspace with the given content.",
                                  parameters: schema([("path", string("The file's path inside the workspace.")), ("content", string("The whole new content."))], required: ["path", "content"]))
        case .appendFile:
            return ToolDefinition(name: tool.rawValue, description: "Add text at the end of a file of the workspace, e.g. a journal.",
                                  parameters: schema([("path", string("The file's path inside the workspace.")), ("text", string("The text to add."))], required: ["path", "text"]))
        case .updateContext:
            return ToolDefinition(name: tool.rawValue, description: "Add or replace one section of context.md, the workspace's shared knowledge, keeping everything else.",
                                  parameters: schema([("section", string("The section's heading, e.g. \"Decisions\".")), ("content", string("The section's new text."))], required: ["section", "content"]))
        case .requestRevision:
            return ToolDefinition(name: tool.rawValue, description: "Ask an earlier agent to revise their work. They run again after you finish.",
                                  parameters: schema([("targetAgentName", string("The name of the agent to ask.", choices: names.agents)),
                                                      ("revisionRequest", string("What needs to be revised."))], required: ["targetAgentName", "revisionRequest"]))
        }
    }

    /// Whether a tool only reads (its result is recorded and served again on replay, where it
    /// is not run).
    static func isReadOnly(_ name: String) -> Bool {
        guard let tool = AgentTool(rawValue: name) else { return true }
        return !tool.writes && tool != .requestRevision
    }

    /// Runs a reading or writing tool (not `request_revision`, which the run handles).
    /// - parameter limit: the most characters a result may have (the agent's budget).
    func run(_ tool: AgentTool, arguments: JSONValue, limit: Int) -> ToolOutcome {
        func argument(_ name: String) throws -> String {
            guard let value = arguments[name]?.stringValue else {
                throw ToolProblem("\(tool.rawValue) needs \"\(name)\", a string; got \(arguments[name].map { $0.jsonText } ?? "nothing")")
            }
            return value
        }
        do {
            switch tool {
            case .readFile:
                return try readFile(try argument("path"), limit: limit)
            case .listFiles:
                return try listFiles(arguments["path"]?.stringValue ?? ".", limit: limit)
            case .searchFiles:
                return try search(try argument("query"), in: arguments["path"]?.stringValue ?? ".", limit: limit)
            case .writeFile:
                let path = try argument("path")
                if try workspace.resolve(path).relative == "context.md" {
                    return .failure("write_file does not replace context.md, which people edit too; use update_context to change one section")
                }
                let result = try workspace.write(path, string: try argument("content"))
                return ToolOutcome(result: "wrote \(result.size) bytes to \(result.path)", isError: false,
                                   effects: [FileEffect(path: result.path, mode: .write, before: result.replaced?.hex, after: result.hash.hex)])
            case .appendFile:
                let path = try argument("path")
                let text = try argument("text")
                let bytes = Self.appendBytes(text)
                let result = try workspace.append(path, bytes: bytes)
                return ToolOutcome(result: "added \(result.length) bytes to \(result.path)", isError: false,
                                   effects: [FileEffect(path: result.path, mode: .append, before: nil, after: ContentHash(of: bytes).hex)])
            case .updateContext:
                let section = try argument("section").trimmingCharacters(in: .whitespacesAndNewlines)
                guard !section.isEmpty, !section.contains("\n") else { return .failure("update_context needs \"section\", a one-line heading") }
                let content = try argument("content")
                let result = try workspace.update("context.md", operation: "update_context") { old in
                    Array(Self.replacingSection(in: String(decoding: old ?? [], as: UTF8.self), heading: section, content: content).utf8)
                }
                return ToolOutcome(result: "updated section '\(section)' of context.md", isError: false,
                                   effects: [FileEffect(path: "context.md", mode: .update, before: result.replaced?.hex, after: result.hash.hex)])
            case .requestRevision:
                return .failure("request_revision is handled by the relay")
            }
        } catch let problem as ToolProblem {
            return .failure(problem.message)
        } catch let error as WorkspaceError {
            return .failure(error.message)
        } catch {
            return .failure("\(error)")
        }
    }

    /// What an append adds: the text and one newline.
    static func appendBytes(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if bytes.last != 0x0A { bytes.append(0x0A) }
        return bytes
    }

    private struct ToolProblem: Error { let message: String; init(_ message: String) { self.message = message } }

    private func readFile(_ path: String, limit: Int) throws -> ToolOutcome {
        let resolved = try workspace.resolve(path)
        guard resolved.exists else { return .failure("\(resolved.relative) does not exist (list_files shows what there is)") }
        switch InputConverter.text(ofFileAt: resolved.absolute, path: resolved.relative) {
        case .text(let text, _):
            return ToolOutcome(result: Self.clip(text, limit: limit, what: resolved.relative), isError: false)
        case .skipped(let reason):
            return .failure(reason)
        }
    }

    private func listFiles(_ path: String, limit: Int) throws -> ToolOutcome {
        let entries = try workspace.list(path)
        let lines = entries.sorted { $0.path < $1.path }.prefix(200).map { entry in
            entry.kind == .folder ? entry.path + "/" : "\(entry.path) (\(entry.size) bytes)"
        }
        let shown = lines.isEmpty ? "(empty folder)" : lines.joined(separator: "\n") + (entries.count > 200 ? "\n… and \(entries.count - 200) more" : "")
        return ToolOutcome(result: Self.clip(shown, limit: limit, what: "the listing"), isError: false)
    }

    private func search(_ query: String, in folder: String, limit: Int) throws -> ToolOutcome {
        let needle = query.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !needle.isEmpty else { return .failure("search_files needs a non-empty \"query\"") }
        var hits: [String] = []
        outer: for entry in try workspace.list(folder, recursive: true).sorted(by: { $0.path < $1.path }) where entry.kind == .file && entry.size <= 2_000_000 {
            guard let bytes = try? workspace.read(entry.path), !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else { continue }
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where line.lowercased().contains(needle) {
                hits.append("\(entry.path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces).prefix(200))")
                if hits.count == 40 { break outer }
            }
        }
        let shown = hits.isEmpty ? "no lines contain '\(query)'" : hits.joined(separator: "\n")
        return ToolOutcome(result: Self.clip(shown, limit: limit, what: "the search results"), isError: false)
    }

    static func clip(_ text: String, limit: Int, what: String) -> String {
        guard text.count > limit else { return text }
        return String(text.prefix(max(0, limit - 80))) + "\n[… cut by Relay: \(what) has \(text.count) characters, \(max(0, limit - 80)) shown …]"
    }

    /// context.md with the section under `heading` replaced by `content` (or added at the end).
    /// Only that section changes; a person's text elsewhere is kept byte for byte.
    static func replacingSection(in text: String, heading: String, content: String) -> String {
        var lines = text.components(separatedBy: "\n")
        let wanted = heading.trimmingCharacters(in: CharacterSet(charactersIn: "# ")).lowercased()
        let body = content.trimmingCharacters(in: .whitespacesAndNewlines)
        if let section = MarkdownSection.range(in: lines, heading: wanted) {
            let start = section.lowerBound - 1, end = section.upperBound
            var replacement = [""] + body.components(separatedBy: "\n")
            if end < lines.count { replacement.append("") }
            lines.replaceSubrange((start + 1)..<end, with: replacement)
            var result = lines.joined(separator: "\n")
            if end >= lines.count, !result.hasSuffix("\n") { result += "\n" }
            return result
        }
        var result = text
        if !result.isEmpty && !result.hasSuffix("\n") { result += "\n" }
        if !result.isEmpty && !result.hasSuffix("\n\n") { result += "\n" }
        return result + "## \(wanted == heading.lowercased() ? heading : heading.trimmingCharacters(in: CharacterSet(charactersIn: "# ")))\n\n\(body)\n"
    }
}
