import Foundation
import LanguageModels
import WorkspaceCore

/// The workspace's notes as MCP resources, each with a `relay://workspace/PATH` URI: context.md,
/// the chats (`Chats/*.md`) and the research summaries (`Research/**/summary.md`). Any other
/// text file of the workspace reads through the template `relay://workspace/{+path}`, through
/// the same sandbox as the tools.
struct ResourceCatalog: Sendable {
    static let prefix = "relay://workspace/"
    let workspace: Workspace

    struct Entry: Sendable, Equatable {
        var path: String
        var title: String
        var description: String
        var size: Int
        var modifiedNanoseconds: Int64
    }

    /// The listed resources, context.md first, then chats and summaries by path.
    func entries() -> [Entry] {
        var entries: [Entry] = []
        if let context = try? workspace.list("context.md").first, context.kind == .file {
            entries.append(Entry(path: "context.md", title: "context.md", description: "The workspace's accumulated knowledge, edited by people and agents.",
                                 size: context.size, modifiedNanoseconds: context.modifiedNanoseconds))
        }
        for chat in ((try? workspace.list("Chats")) ?? []).sorted(by: { $0.path < $1.path })
        where chat.kind == .file && chat.path.hasSuffix(".md") && chat.path != "Chats/README.md" {
            entries.append(Entry(path: chat.path, title: "Chat: " + String(chat.path.dropFirst(6).dropLast(3)),
                                 description: "A conversation with the workspace's agents.", size: chat.size, modifiedNanoseconds: chat.modifiedNanoseconds))
        }
        for summary in ((try? workspace.list("Research", recursive: true)) ?? []).sorted(by: { $0.path < $1.path })
        where summary.kind == .file && summary.path.hasSuffix("/summary.md") {
            let topic = summary.path.dropFirst("Research/".count).dropLast("/summary.md".count)
            entries.append(Entry(path: summary.path, title: "Research summary: \(topic)",
                                 description: "The research relay's summary of a dropped source.", size: summary.size, modifiedNanoseconds: summary.modifiedNanoseconds))
        }
        return entries
    }

    func declaration(_ entry: Entry, version: ProtocolVersion) -> JSONValue {
        var object: [String: JSONValue] = [
            "uri": .string(Self.uri(entry.path)), "name": .string(entry.path), "description": .string(entry.description),
            "mimeType": "text/markdown", "size": .number(Double(entry.size)),
        ]
        if version >= .v2025_06_18 { object["title"] = .string(entry.title) }
        return .object(object)
    }

    static let template: JSONValue = [
        "uriTemplate": .string(prefix + "{+path}"), "name": "workspace-file", "title": "A workspace file",
        "description": "Any text file of the Relay workspace, by its path relative to the root.", "mimeType": "text/plain",
    ]

    /// `resources/read`: the file's text, through the sandbox.
    func read(_ uri: String) throws -> JSONValue {
        let path = try Self.path(of: uri)
        let resolved: ResolvedPath
        let bytes: [UInt8]
        do {
            resolved = try workspace.resolve(path)
            bytes = try workspace.read(path)
        } catch let error as WorkspaceError {
            throw MCPError(.resourceNotFound, "\(uri): \(error.message)")
        }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw MCPError(.invalidParameters, "\(uri) is not text (\(bytes.count) bytes)")
        }
        let type = resolved.relative.hasSuffix(".md") ? "text/markdown" : "text/plain"
        return ["contents": [["uri": .string(Self.uri(resolved.relative)), "mimeType": .string(type), "text": .string(text)]]]
    }

    /// A stamp of the file behind `uri` (size and time), nil when it is missing or refused: what
    /// changes when the file does.
    func stamp(_ uri: String) -> [Int64]? {
        guard let path = try? Self.path(of: uri), let entry = try? workspace.list(path).first, entry.kind == .file else { return nil }
        return [Int64(entry.size), entry.modifiedNanoseconds]
    }

    static func uri(_ path: String) -> String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "%?#[]"))
        return prefix + (path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path)
    }

    static func path(of uri: String) throws -> String {
        guard uri.hasPrefix(prefix), let path = String(uri.dropFirst(prefix.count)).removingPercentEncoding, !path.isEmpty else {
            throw MCPError(.resourceNotFound, "\(uri) is not a Relay resource (they look like \(prefix)context.md)")
        }
        return path
    }
}
