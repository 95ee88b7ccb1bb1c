import RelayJSON

/// Three-way merge of a JSON configuration file (relay.json, a roster) by key path: edits to
/// different keys merge; an array whose elements are all objects with a distinct string `"id"`
/// (a roster's agents) merges element by element, matched by id; the same key (or agent field)
/// changed to different values on the two sides, or deleted on one side and changed on the
/// other, is a conflict, and the caller keeps both versions as for any file that cannot merge.
///
/// The merged file is written in the file's own style: a value neither side changed, or only
/// one side changed, is copied with its bytes as that side wrote them (re-indented when it moves
/// to another depth); an object or array both sides changed is laid out as our side laid it out
/// (one member a line or all on one line, the indentation, the text between a key and its
/// value), with our order of keys and the other side's new keys after the key they follow there.
///
/// For example:
/// ```swift
/// // base:   {"model": {"baseURL": "http://a"}, "sync": {"peers": []}}
/// // ours:   {"model": {"baseURL": "http://b"}, "sync": {"peers": []}}
/// // theirs: {"model": {"baseURL": "http://a"}, "sync": {"peers": ["/media/usb/notes"]}}
/// JSONMerge.merge(base: base, ours: ours, theirs: theirs)
/// // {"model": {"baseURL": "http://b"}, "sync": {"peers": ["/media/usb/notes"]}}
/// ```
enum JSONMerge {
    /// The merged bytes; nil when the sides conflict, or when a version (the base included) is
    /// not a JSON document.
    static func merge(base: [UInt8]?, ours: [UInt8], theirs: [UInt8]) -> [UInt8]? {
        guard let base, let baseDocument = Document(base), let ourDocument = Document(ours),
              let theirDocument = Document(theirs) else { return nil }
        let merger = JSONMerge.Merger(ours: ourDocument, theirs: theirDocument)
        guard let root = try? merger.value(baseDocument.root, ourDocument.root, theirDocument.root) else { return nil }
        let rootStart = ourDocument.root.bytes.lowerBound
        var text = String(decoding: ourDocument.bytes[..<rootStart], as: UTF8.self)
        text += merger.render(root, indent: ourDocument.indentation(at: rootStart))
        text += String(decoding: ourDocument.bytes[ourDocument.root.bytes.upperBound...], as: UTF8.self)
        let merged = Array(text.utf8)
        // What is written must read back: a merge that cannot is a conflict, never a broken file.
        guard (try? JSONNode.parse(merged, file: "merged")) != nil else { return nil }
        return merged
    }

    /// One version of the file: its bytes, its parse, and where its lines start.
    struct Document {
        let bytes: [UInt8]
        let root: JSONNode
        let lineStarts: [Int]

        init?(_ bytes: [UInt8]) {
            guard let root = try? JSONNode.parse(bytes, file: "") else { return nil }
            self.bytes = bytes
            self.root = root
            var starts = [0]
            for (offset, byte) in bytes.enumerated() where byte == 0x0A { starts.append(offset + 1) }
            lineStarts = starts
        }

        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        /// The blanks that begin the line holding `offset`.
        func indentation(at offset: Int) -> String {
            let line = (lineStarts.lastIndex { $0 <= offset }) ?? 0
            return indentation(ofLine: line + 1)
        }

        /// The blanks that begin line `line` (1-based).
        func indentation(ofLine line: Int) -> String {
            var end = lineStarts[line - 1]
            while end < bytes.count, bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
            return text(lineStarts[line - 1]..<end)
        }

        /// The key of `member` as written (escapes and all), and what stands between it and the value.
        func keyText(of member: JSONNode.Member) -> (key: String, separator: String) {
            var colon = member.value.bytes.lowerBound - 1
            while colon > 0, bytes[colon] != UInt8(ascii: ":") { colon -= 1 }
            var quote = colon - 1
            while quote > 0, bytes[quote] != UInt8(ascii: "\"") { quote -= 1 }
            let keyStart = lineStarts[member.line - 1] + member.column - 1
            guard keyStart <= quote else { return (JSONMerge.quoted(member.key), ": ") }
            return (text(keyStart..<(quote + 1)), text((quote + 1)..<member.value.bytes.lowerBound))
        }

        /// One unit of indentation in this file: the first indented line's blanks (two spaces
        /// for a file written on one line).
        var indentUnit: String {
            for line in 1...lineStarts.count {
                let blanks = indentation(ofLine: line)
                if !blanks.isEmpty { return blanks }
            }
            return "  "
        }
    }

    struct Conflict: Error {}

    /// Which side's text a kept value comes from.
    enum Source { case ours, theirs }

    /// The merged tree: values copied from one side, and the objects and arrays both changed.
    indirect enum Merged {
        case kept(JSONNode, Source)
        case object([(key: String, keyText: String, separator: String, value: Merged)], layout: JSONNode?)
        case array([Merged], layout: JSONNode?)
    }

    struct Merger {
        let ours: Document
        let theirs: Document

        func document(_ source: Source) -> Document { source == .ours ? ours : theirs }

        /// The merge of one value present (or absent: nil) in the base and on each side; nil
        /// when the merge removes it.
        func value(_ base: JSONNode?, _ mine: JSONNode?, _ yours: JSONNode?) throws(Conflict) -> Merged? {
            if JSONMerge.same(mine, yours) { return mine.map { .kept($0, .ours) } }
            if JSONMerge.same(base, mine) { return yours.map { .kept($0, .theirs) } }
            if JSONMerge.same(base, yours) { return mine.map { .kept($0, .ours) } }
            // Both changed it, differently: only two objects, or two rosters, can still merge.
            guard let mine, let yours else { throw Conflict() }
            if case .object(let ourMembers) = mine.value, case .object(let theirMembers) = yours.value {
                let baseMembers: [JSONNode.Member]
                switch base?.value {
                case .object(let members): baseMembers = members
                case nil: baseMembers = []
                default: throw Conflict()
                }
                return try object(baseMembers, ourMembers, theirMembers, layout: mine)
            }
            if let ourElements = JSONMerge.agents(mine), let theirElements = JSONMerge.agents(yours) {
                let baseElements: [(id: String, node: JSONNode)]
                if let base {
                    guard let elements = JSONMerge.agents(base) else { throw Conflict() }
                    baseElements = elements
                } else {
                    baseElements = []
                }
                return try array(baseElements, ourElements, theirElements, layout: mine)
            }
            throw Conflict()
        }

        private func object(_ base: [JSONNode.Member], _ mine: [JSONNode.Member], _ yours: [JSONNode.Member],
                            layout: JSONNode) throws(Conflict) -> Merged {
            let order = JSONMerge.order(mine.map(\.key), yours.map(\.key))
            var members: [(key: String, keyText: String, separator: String, value: Merged)] = []
            for key in order {
                let ourMember = mine.first { $0.key == key }, theirMember = yours.first { $0.key == key }
                guard let merged = try value(base.first { $0.key == key }?.value, ourMember?.value, theirMember?.value) else { continue }
                let (keyText, separator) = ourMember.map(ours.keyText) ?? theirMember.map(theirs.keyText) ?? (JSONMerge.quoted(key), ": ")
                members.append((key, keyText, separator, merged))
            }
            return .object(members, layout: layout)
        }

        private func array(_ base: [(id: String, node: JSONNode)], _ mine: [(id: String, node: JSONNode)],
                           _ yours: [(id: String, node: JSONNode)], layout: JSONNode) throws(Conflict) -> Merged {
            let order = JSONMerge.order(mine.map(\.id), yours.map(\.id))
            var elements: [Merged] = []
            for id in order {
                if let merged = try value(base.first { $0.id == id }?.node, mine.first { $0.id == id }?.node, yours.first { $0.id == id }?.node) {
                    elements.append(merged)
                }
            }
            return .array(elements, layout: layout)
        }

        /// The text of `merged`, which starts on a line indented by `indent`.
        func render(_ merged: Merged, indent: String) -> String {
            switch merged {
            case .kept(let node, let source):
                let document = document(source)
                return JSONMerge.reindent(document.text(node.bytes), from: document.indentation(at: node.bytes.lowerBound), to: indent)
            case .object(let members, let layout):
                if members.isEmpty { return "{}" }
                let (oneLine, inner) = style(layout, indent: indent, firstLine: firstMemberLine(layout))
                let parts = members.map { "\($0.keyText)\($0.separator)" + render($0.value, indent: oneLine ? indent : inner) }
                return oneLine ? "{" + parts.joined(separator: ", ") + "}"
                    : "{\n" + parts.map { inner + $0 }.joined(separator: ",\n") + "\n" + indent + "}"
            case .array(let elements, let layout):
                if elements.isEmpty { return "[]" }
                let (oneLine, inner) = style(layout, indent: indent, firstLine: firstElementLine(layout))
                let parts = elements.map { render($0, indent: oneLine ? indent : inner) }
                return oneLine ? "[" + parts.joined(separator: ", ") + "]"
                    : "[\n" + parts.map { inner + $0 }.joined(separator: ",\n") + "\n" + indent + "]"
            }
        }

        /// Whether our side wrote this object or array on one line, and otherwise the
        /// indentation of its members (its first member's line, or one unit deeper).
        private func style(_ layout: JSONNode?, indent: String, firstLine: Int?) -> (oneLine: Bool, inner: String) {
            if let layout, let firstLine {
                if firstLine == layout.line { return (!ours.text(layout.bytes).contains("\n"), indent + ours.indentUnit) }
                return (false, ours.indentation(ofLine: firstLine))
            }
            return (false, indent + ours.indentUnit)
        }

        private func firstMemberLine(_ layout: JSONNode?) -> Int? {
            guard case .object(let members)? = layout?.value else { return nil }
            return members.first?.line
        }

        private func firstElementLine(_ layout: JSONNode?) -> Int? {
            guard case .array(let elements)? = layout?.value else { return nil }
            return elements.first?.line
        }
    }

    /// Our keys in our order, then each key only the other side has, placed after the key it
    /// follows there (or first, when it comes first there).
    static func order(_ mine: [String], _ yours: [String]) -> [String] {
        var result = mine
        var known = Set(mine)
        for (offset, key) in yours.enumerated() where !known.contains(key) {
            let previous = yours[..<offset].last { result.contains($0) }
            let at = previous.flatMap { result.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
            result.insert(key, at: at)
            known.insert(key)
        }
        return result
    }

    /// The elements of an array of objects each with a distinct string "id" (a roster); nil for
    /// any other array, or for a value that is not an array.
    static func agents(_ node: JSONNode) -> [(id: String, node: JSONNode)]? {
        guard case .array(let elements) = node.value, !elements.isEmpty else { return nil }
        var seen = Set<String>()
        var result: [(id: String, node: JSONNode)] = []
        for element in elements {
            guard case .object(let members) = element.value,
                  case .string(let id)? = members.first(where: { $0.key == "id" })?.value.value,
                  seen.insert(id).inserted else { return nil }
            result.append((id, element))
        }
        return result
    }

    /// Whether two values are equal as JSON (the order of an object's keys aside); two absent
    /// values are the same, an absent and a present one are not.
    static func same(_ a: JSONNode?, _ b: JSONNode?) -> Bool {
        switch (a?.value, b?.value) {
        case (nil, nil): return true
        case (.object(let x)?, .object(let y)?):
            guard x.count == y.count else { return false }
            return x.allSatisfy { member in y.contains { $0.key == member.key && same(member.value, $0.value) } }
        case (.array(let x)?, .array(let y)?):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.string(let x)?, .string(let y)?): return x == y
        case (.number(let x)?, .number(let y)?): return x == y
        case (.bool(let x)?, .bool(let y)?): return x == y
        case (.null?, .null?): return true
        default: return false
        }
    }

    /// `text`'s lines after the first moved from `old` indentation to `new`.
    static func reindent(_ text: String, from old: String, to new: String) -> String {
        guard old != new, text.contains("\n") else { return text }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for index in lines.indices.dropFirst() where lines[index].hasPrefix(old) {
            lines[index] = new + lines[index].dropFirst(old.count)
        }
        return lines.joined(separator: "\n")
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
