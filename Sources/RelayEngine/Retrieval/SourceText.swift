import Foundation
import WorkspaceCore

/// The text of a workspace file as the search and the evidence read it. A Markdown or text file
/// is its own text. A document dropped as PDF, HTML, DOCX, ODT, EPUB or RTF is read through
/// `InputConverter` (the same conversion its summary was made from), so a question about an HTML
/// timetable finds the timetable's rows, not only what its summary kept. A CSV is read as its
/// Markdown table (`CSVTable`).
///
/// A conversion runs once per content: its text is kept in `.relay/cache/text/<SHA-256>.md`,
/// named by the bytes converted, so an edited document is converted again and an unchanged one
/// never is. A file that cannot be converted is kept as an empty text (and searched as nothing).
/// The cache is derived state: deleting it costs one conversion per document.
struct SourceText {
    let workspace: Workspace

    /// The extensions read through a converter.
    static let converted: Set<String> = ["pdf", "html", "htm", "docx", "odt", "epub", "rtf"]
    /// A conversion in the middle of a search may take this long before the file is skipped.
    static let conversionTimeout: TimeInterval = 30

    static func isConverted(_ path: String) -> Bool {
        let name = path.lowercased()
        guard let dot = name.lastIndex(of: "."), !name[dot...].contains("/") else { return false }
        return converted.contains(String(name[name.index(after: dot)...]))
    }

    /// The file's text; nil when it cannot be read or is not text.
    func text(of path: String) -> String? {
        guard let bytes = try? workspace.read(path) else { return nil }
        guard Self.isConverted(path) else {
            guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else { return nil }
            // A CSV is read as its table (cheap: no cache).
            if CSVTable.isTable(path), let table = CSVTable.markdown(text, separator: path.lowercased().hasSuffix(".tsv") ? "\t" : ",") {
                return table
            }
            return text
        }
        let cached = workspace.layout.state + "/cache/text/" + ContentHash(of: bytes).hex + ".md"
        if let kept = try? StateFile.read(cached) { return String(decoding: kept, as: UTF8.self) }
        var text = ""
        if let resolved = try? workspace.resolve(path),
           case .text(let converted, _) = InputConverter.text(ofFileAt: resolved.absolute, path: path, timeout: Self.conversionTimeout) {
            text = converted
        }
        // Best effort: without the cache the next search converts again.
        try? StateFile.makeFolders((cached as NSString).deletingLastPathComponent)
        try? StateFile.replace(cached, with: Array(text.utf8), durable: false)
        return text
    }
}

/// The conversions `SourceText` keeps, pruned: `relay gc` (and the daemon's hourly housekeeping)
/// removes the text kept for content no file of the workspace holds any more — a document
/// deleted, or edited since (its new bytes have a conversion of their own). What a current file
/// has is kept: pruning never costs a conversion.
public enum TextCache {
    public struct Pruning: Codable, Sendable, Equatable {
        /// Conversions kept (of documents the workspace holds now).
        public var kept = 0
        /// The cache files removed (or, in a dry run, that would be).
        public var pruned: [String] = []
        public var bytesFreed = 0
    }

    public static func prune(in workspace: Workspace, dryRun: Bool) throws -> Pruning {
        let folder = workspace.layout.state + "/cache/text"
        let names = (try? StateFile.names(in: folder)) ?? []
        guard !names.isEmpty else { return Pruning() }
        var current: Set<String> = []
        for entry in try workspace.list(".", recursive: true) where entry.kind == .file && SourceText.isConverted(entry.path) {
            if let hash = try? workspace.hash(entry.path) { current.insert(hash.hex + ".md") }
        }
        var result = Pruning()
        for name in names.sorted() {
            guard !current.contains(name) else { result.kept += 1; continue }
            let path = folder + "/" + name
            let size = (try? StateFile.read(path))??.count ?? 0
            if !dryRun { guard try StateFile.remove(path) else { continue } }
            result.pruned.append(name)
            result.bytesFreed += size
        }
        return result
    }
}
