import RelayEngine

/// What the `edit` tool changes: a span of text, or the body of a Markdown section.
enum TextEdit: Sendable, Equatable {
    case span(old: String, new: String)
    case section(heading: String, content: String)

    init(_ arguments: ToolArguments) throws {
        let old = try arguments.optionalString("oldText"), new = try arguments.optionalString("newText")
        let heading = try arguments.optionalString("section"), content = try arguments.optionalString("content")
        switch (old, new, heading, content) {
        case (let old?, let new?, nil, nil):
            guard !old.isEmpty else { throw ToolFailure("edit: \"oldText\" is empty; give the text to replace") }
            self = .span(old: old, new: new)
        case (nil, nil, let heading?, let content?):
            let heading = heading.trimmingCharacters(in: ["#", " ", "\t"])
            guard !heading.isEmpty, !heading.contains("\n") else { throw ToolFailure("edit: \"section\" must be a one-line heading") }
            self = .section(heading: heading, content: content)
        default:
            throw ToolFailure("edit takes either \"oldText\" and \"newText\" (replace a span) or \"section\" and \"content\" (replace a section's body), not \(arguments.values.keys.filter { $0 != "path" && $0 != "expectedVersion" }.sorted().joined(separator: ", "))")
        }
    }

    /// `text` with the change made. Refuses (nothing changes) when the span is not there
    /// exactly once or the section does not exist.
    func apply(to text: String, path: String) throws -> String {
        switch self {
        case .span(let old, let new):
            let matches = text.ranges(of: old)
            guard matches.count == 1 else {
                throw ToolFailure(matches.isEmpty
                    ? "edit: \(path) does not contain oldText (read it again: it may have changed)"
                    : "edit: oldText occurs \(matches.count) times in \(path); include more of the surrounding text so it occurs once")
            }
            return text.replacingCharacters(in: matches[0], with: new)
        case .section(let heading, let content):
            guard MarkdownSections.contains(text, heading: heading) else {
                let headings = MarkdownSections.headings(in: text)
                throw ToolFailure("edit: \(path) has no section '\(heading)'" + (headings.isEmpty ? " (it has no headings)" : "; its headings are: " + headings.joined(separator: ", ")))
            }
            return MarkdownSections.replacing(in: text, heading: heading, content: content)
        }
    }
}
