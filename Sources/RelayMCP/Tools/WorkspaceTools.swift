import Foundation
import LanguageModels
import RelayEngine
import WorkspaceCore

/// The workspace's file primitives as tools: each call goes through the workspace's sandbox and
/// coordinated lock, and every version a write replaces is kept (`relay fs history`).
enum WorkspaceTools {
    /// Files larger than this are not returned by `read` (a model could not use them whole).
    static let largestRead = 4 * 1024 * 1024
    /// The most entries `list` returns.
    static let longestListing = 2000

    static func all(_ workspace: Workspace) -> [MCPTool] {
        [read(workspace), write(workspace), append(workspace), list(workspace), history(workspace), restore(workspace),
         edit(workspace), updateContext(workspace)]
    }

    static let versionDescription = "The version (content hash, hex; 6 or more leading digits) the change was made against, as read or write returned it. When the file has changed since, the change is refused and the refusal names the current version."

    static let writeOutput = Schema.output([
        "path": Schema.text, "version": Schema.text, "size": Schema.int, "replaced": Schema.optionalText,
    ], optional: ["replaced"])

    static func writeOutput(_ result: Workspace.WriteResult, verb: String) -> ToolOutput {
        var text = "\(verb) \(result.path): \(result.size) bytes, version \(result.hash.hex)"
        if let replaced = result.replaced { text += " (the replaced version \(replaced.hex) is kept)" }
        return ToolOutput(text: text, structured: [
            "path": .string(result.path), "version": .string(result.hash.hex), "size": .number(Double(result.size)),
            "replaced": result.replaced.map { .string($0.hex) } ?? .null,
        ])
    }

    // MARK: read, list, history

    static func read(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "read", title: "Read a workspace file",
            description: "Read a text file of the Relay workspace. Returns its text and its version (a content hash) to pass as expectedVersion to edit or write.",
            inputSchema: Schema.object(["path": Schema.string("A path relative to the workspace root, e.g. context.md or Journal/user/2026-11-22.md.")], required: ["path"]),
            outputSchema: Schema.output(["path": Schema.text, "version": Schema.text, "size": Schema.int, "text": Schema.text]),
            hints: .init(readOnly: true, idempotent: true)
        ) { arguments in
            let path = try arguments.string("path")
            let resolved = try workspace.resolve(path)
            let (bytes, hash) = try workspace.readHashed(path)
            guard bytes.count <= largestRead else {
                throw ToolFailure("\(resolved.relative) has \(bytes.count) bytes, more than read returns (\(largestRead)); search finds lines in it")
            }
            guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
                throw ToolFailure("\(resolved.relative) is not text (\(bytes.count) bytes of binary or non-UTF-8 data)")
            }
            return ToolOutput(text: text, structured: [
                "path": .string(resolved.relative), "version": .string(hash.hex), "size": .number(Double(bytes.count)), "text": .string(text),
            ])
        }
    }

    static func list(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "list", title: "List a workspace folder",
            description: "List a folder of the workspace (default: its root), folders first marked with a trailing /. .relay/ is never listed.",
            inputSchema: Schema.object([
                "path": Schema.string("A folder relative to the workspace root; default \".\"."),
                "recursive": Schema.boolean("List the folders inside too; default false."),
            ]),
            outputSchema: Schema.output([
                "entries": Schema.array(of: Schema.output(["path": Schema.text, "kind": Schema.text, "size": Schema.int])),
                "truncated": Schema.bool,
            ]),
            hints: .init(readOnly: true, idempotent: true)
        ) { arguments in
            let path = try arguments.optionalString("path") ?? "."
            let entries = try workspace.list(path, recursive: try arguments.optionalBool("recursive") ?? false).sorted { $0.path < $1.path }
            let shown = entries.prefix(longestListing)
            let lines = shown.map { $0.kind == .folder ? $0.path + "/" : "\($0.path) (\($0.size) bytes)" }
            var text = lines.isEmpty ? "(empty folder)" : lines.joined(separator: "\n")
            if entries.count > shown.count { text += "\n… and \(entries.count - shown.count) more" }
            return ToolOutput(text: text, structured: [
                "entries": .array(shown.map { ["path": .string($0.path), "kind": .string($0.kind.rawValue), "size": .number(Double($0.size))] }),
                "truncated": .bool(entries.count > shown.count),
            ])
        }
    }

    static func history(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "history", title: "List a file's kept versions",
            description: "List the versions of a file that Relay replaced and kept, newest first. restore puts one back.",
            inputSchema: Schema.object(["path": Schema.string("A path relative to the workspace root.")], required: ["path"]),
            outputSchema: Schema.output([
                "path": Schema.text,
                "versions": Schema.array(of: Schema.output([
                    "time": Schema.text, "operation": Schema.text, "version": Schema.optionalText, "size": Schema.optionalInt,
                    "kept": Schema.bool, "pruned": Schema.bool, "replacedBy": Schema.text,
                ])),
            ]),
            hints: .init(readOnly: true, idempotent: true)
        ) { arguments in
            let path = try arguments.string("path")
            let resolved = try workspace.resolve(path)
            let records = try workspace.history(path).reversed()
            let prunedVersions = try workspace.prunedVersions()
            var lines: [String] = []
            var versions: [JSONValue] = []
            for record in records {
                let time = Timestamp.iso8601(Date(timeIntervalSince1970: Double(record.timeNanoseconds) / 1e9))
                let pruned = record.replaced.map { prunedVersions.contains($0) && !workspace.objects.contains($0) } ?? false
                let kept = record.replaced != nil && record.replacedStored && !pruned
                versions.append([
                    "time": .string(time), "operation": .string(record.operation), "version": record.replaced.map { .string($0.hex) } ?? .null,
                    "size": record.replacedSize.map { .number(Double($0)) } ?? .null, "kept": .bool(kept), "pruned": .bool(pruned),
                    "replacedBy": .string(record.installed.hex),
                ])
                if let replaced = record.replaced {
                    let note = pruned ? " (pruned by the retention policy)" : record.replacedStored ? "" : " (too large, not kept)"
                    lines.append("\(time) \(replaced.hex) replaced by \(record.operation) with \(record.installed.short)\(note)")
                } else {
                    lines.append("\(time) created by \(record.operation) as \(record.installed.short)")
                }
            }
            let text = lines.isEmpty ? "\(resolved.relative): no versions kept yet (Relay has not replaced it)" : lines.joined(separator: "\n")
            return ToolOutput(text: text, structured: ["path": .string(resolved.relative), "versions": .array(versions)])
        }
    }

    // MARK: writing

    static func write(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "write", title: "Write a workspace file",
            description: "Replace (or create) a file of the workspace with text, atomically. The replaced version is kept (history lists it, restore brings it back). Give expectedVersion to refuse the write if somebody changed the file since you read it. A file written into a trigger folder (Research/, Chats/) starts its relay as a person's drop does.",
            inputSchema: Schema.object([
                "path": Schema.string("A path relative to the workspace root; missing folders are created."),
                "content": Schema.string("The whole new text of the file."),
                "expectedVersion": Schema.string(versionDescription),
            ], required: ["path", "content"]),
            outputSchema: writeOutput,
            hints: .init(destructive: true, idempotent: true)
        ) { arguments in
            let path = try arguments.string("path")
            let content = Array(try arguments.string("content").utf8)
            guard let expected = try arguments.optionalString("expectedVersion") else {
                return writeOutput(try workspace.write(path, bytes: content, operation: "mcp write"), verb: "wrote")
            }
            let check = try ExpectedVersion(expected, tool: "write")
            let result = try workspace.update(path, operation: "mcp write") { old in
                try check.verify(old, path: path)
                return content
            }
            return writeOutput(result, verb: "wrote")
        }
    }

    static func append(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "append", title: "Append to a workspace file",
            description: "Append text to a file as whole lines (a newline is added where needed), under the file's lock, so appends from many writers never interleave. Made for journals: Journal/agent/YYYY-MM-DD.md.",
            inputSchema: Schema.object([
                "path": Schema.string("A path relative to the workspace root; created if missing."),
                "text": Schema.string("The text to add at the end."),
            ], required: ["path", "text"]),
            outputSchema: Schema.output(["path": Schema.text, "offset": Schema.int, "length": Schema.int]),
            hints: .init()
        ) { arguments in
            let result = try workspace.append(try arguments.string("path"), bytes: Array(try arguments.string("text").utf8))
            return ToolOutput(text: "appended \(result.length) bytes to \(result.path) at offset \(result.offset)", structured: [
                "path": .string(result.path), "offset": .number(Double(result.offset)), "length": .number(Double(result.length)),
            ])
        }
    }

    static func restore(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "restore", title: "Restore a kept version",
            description: "Put a kept version of a file back (a version from history, 6 or more hex digits). The content it replaces is kept too.",
            inputSchema: Schema.object([
                "path": Schema.string("A path relative to the workspace root."),
                "version": Schema.string("The version to restore, from history."),
            ], required: ["path", "version"]),
            outputSchema: writeOutput,
            hints: .init(destructive: true, idempotent: true)
        ) { arguments in
            writeOutput(try workspace.restore(try arguments.string("path"), version: try arguments.string("version")), verb: "restored")
        }
    }

    static func edit(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "edit", title: "Edit part of a workspace file",
            description: """
                Change part of a text file, leaving the rest as it is: either replace oldText (which must occur exactly once) \
                with newText, or replace the body of the Markdown section under the heading `section` (e.g. "Goals" for \
                "## Goals") with content. Give expectedVersion (from read) to refuse the edit if the file changed since; \
                without it the edit applies to the current text. A person's concurrent save is never lost: the edit is made \
                again on their text.
                """,
            inputSchema: Schema.object([
                "path": Schema.string("A path relative to the workspace root."),
                "oldText": Schema.string("Text to replace; must occur exactly once in the file."),
                "newText": Schema.string("What replaces oldText."),
                "section": Schema.string("A heading of the file, without its #s: its section's body is replaced."),
                "content": Schema.string("The new body of the section."),
                "expectedVersion": Schema.string(versionDescription),
            ], required: ["path"]),
            outputSchema: writeOutput,
            hints: .init(destructive: true)
        ) { arguments in
            let path = try arguments.string("path")
            let change = try TextEdit(arguments)
            let check = try arguments.optionalString("expectedVersion").map { try ExpectedVersion($0, tool: "edit") }
            let result = try workspace.update(path, operation: "mcp edit") { old in
                try check?.verify(old, path: path)
                guard let old else { throw ToolFailure("\(path) does not exist; write creates a file") }
                guard let text = String(validating: old, as: UTF8.self) else { throw ToolFailure("\(path) is not UTF-8 text; edit changes text files") }
                return Array(try change.apply(to: text, path: path).utf8)
            }
            return writeOutput(result, verb: "edited")
        }
    }

    static func updateContext(_ workspace: Workspace) -> MCPTool {
        MCPTool(
            name: "update_context", title: "Update a section of context.md",
            description: "Replace one section of context.md (the workspace's accumulated knowledge, which people edit too) with new content, or add the section at the end. Everything outside the section is kept byte for byte, including a person's concurrent edit.",
            inputSchema: Schema.object([
                "section": Schema.string("The section's heading, one line, without #s (e.g. \"Llamas\")."),
                "content": Schema.string("The section's new body (Markdown)."),
                "expectedVersion": Schema.string(versionDescription),
            ], required: ["section", "content"]),
            outputSchema: writeOutput,
            hints: .init(destructive: true, idempotent: true)
        ) { arguments in
            let section = try arguments.string("section").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !section.isEmpty, !section.contains("\n") else { throw ToolFailure("update_context: \"section\" must be a one-line heading") }
            let content = try arguments.string("content")
            let check = try arguments.optionalString("expectedVersion").map { try ExpectedVersion($0, tool: "update_context") }
            let result = try workspace.update("context.md", operation: "mcp update_context") { old in
                try check?.verify(old, path: "context.md")
                return Array(MarkdownSections.replacing(in: String(decoding: old ?? [], as: UTF8.self), heading: section, content: content).utf8)
            }
            return writeOutput(result, verb: "updated section '\(section)' of")
        }
    }
}

/// An `expectedVersion` argument: the version a change was made against.
struct ExpectedVersion: Sendable {
    let prefix: String

    init(_ text: String, tool: String) throws {
        let prefix = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard prefix.count >= 6, prefix.count <= 64, prefix.allSatisfy(\.isHexDigit) else {
            throw ToolFailure("\(tool): \"expectedVersion\" must be 6 to 64 hex digits of a version that read returned, not '\(text)'")
        }
        self.prefix = prefix
    }

    /// Throws the refusal, naming the current version, when `current` is not the expected one.
    func verify(_ current: [UInt8]?, path: String) throws {
        guard let current else {
            throw ToolFailure("refused: \(path) was expected at version \(prefix) but no longer exists; nothing was changed")
        }
        let hash = ContentHash(of: current)
        guard hash.hex.hasPrefix(prefix) else {
            throw ToolFailure("refused: \(path) changed since version \(prefix) was read; its current version is \(hash.hex). Nothing was changed: read it again and redo the change with expectedVersion \(hash.hex)")
        }
    }
}
