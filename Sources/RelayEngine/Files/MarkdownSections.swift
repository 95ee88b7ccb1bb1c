import Foundation

/// The section editing of the agents' `update_context`, for other callers (`relay mcp`'s
/// `update_context` and `edit` tools), so a section means the same thing to all of them.
///
/// For example:
/// ```swift
/// let text = "# Context\n\n## Pets\n\nA cat.\n"
/// MarkdownSections.replacing(in: text, heading: "Pets", content: "A cat called Miso.")
/// // "# Context\n\n## Pets\n\nA cat called Miso.\n"
/// ```
public enum MarkdownSections {
    /// `text` with the body of the section under `heading` (any level, any case) replaced by
    /// `content`, or a new `## heading` section at the end when there is none. Only that
    /// section changes; the rest is kept byte for byte.
    public static func replacing(in text: String, heading: String, content: String) -> String {
        AgentToolbox.replacingSection(in: text, heading: heading, content: content)
    }

    /// Whether `text` has a section under `heading` (any level, any case, without the `#`s).
    public static func contains(_ text: String, heading: String) -> Bool {
        let wanted = heading.trimmingCharacters(in: ["#", " "]).lowercased()
        return MarkdownSection.range(in: text.components(separatedBy: "\n"), heading: wanted) != nil
    }

    /// The headings of `text`, as written after their `#`s, in order.
    public static func headings(in text: String) -> [String] {
        text.components(separatedBy: "\n").compactMap { line in
            MarkdownSection.headingLevel(line).map { _ in line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces) }
        }
    }
}
