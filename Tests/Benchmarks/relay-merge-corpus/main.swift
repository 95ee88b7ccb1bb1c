// relay-merge-corpus: Relay's text merge against `git merge-file` on real concurrent edits.
//
// Usage: relay-merge-corpus CORPUS [--list]
//
// CORPUS is a folder made by make-corpus.py (beside this file) from the merge commits of git
// repositories: one folder per case with base, ours, theirs, git.out and git.status. For every
// case the text merge Relay uses for Markdown and other text (`ThreeWayMerge`, with the sync's
// edit limit) runs on the same three versions, and the result is compared with git's:
//   - of the cases git merges cleanly: how many Relay merges to the same bytes, how many it
//     makes a conflict copy of (a conflict), how many it merges to other bytes;
//   - of the cases git does not merge: how many Relay merges anyway (never wanted: each is
//     listed, with git's conflict count).
// --list prints every case of the last two kinds and every case Relay merges differently.

import Foundation
import WorkspaceSync

let arguments = CommandLine.arguments.dropFirst()
guard let corpus = arguments.first(where: { !$0.hasPrefix("--") }) else {
    FileHandle.standardError.write(Data("usage: relay-merge-corpus CORPUS [--list]\n".utf8))
    exit(2)
}
let list = arguments.contains("--list")

func text(_ path: String) -> String? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    return String(data: data, encoding: .utf8)
}

guard let names = try? FileManager.default.contentsOfDirectory(atPath: corpus) else {
    FileHandle.standardError.write(Data("relay-merge-corpus: cannot read the folder \(corpus)\n".utf8))
    exit(2)
}
var cases = 0, gitClean = 0, equal = 0, relayConflicts: [String] = [], different: [String] = []
var gitConflicts = 0, relayCleanWhereGitConflicts: [String] = [], unreadable: [String] = []
for name in names.sorted() {
    let folder = corpus + "/" + name
    guard let base = text(folder + "/base"), let ours = text(folder + "/ours"), let theirs = text(folder + "/theirs"),
          let gitOut = text(folder + "/git.out"), let status = text(folder + "/git.status").flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
    else { unreadable.append(name); continue }
    guard status >= 0 else { unreadable.append(name); continue }
    cases += 1
    let origin = text(folder + "/origin")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    let merged = ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, winner: .ours, maximumEdits: 20_000)
    if status == 0 {
        gitClean += 1
        guard let merged, merged.conflicts == 0 else { relayConflicts.append("\(name) \(origin)"); continue }
        if merged.text == gitOut { equal += 1 } else { different.append("\(name) \(origin)") }
    } else {
        gitConflicts += 1
        if let merged, merged.conflicts == 0 { relayCleanWhereGitConflicts.append("\(name) (git: \(status)) \(origin)") }
    }
}
print("relay-merge-corpus: \(cases) cases in \(corpus)\(unreadable.isEmpty ? "" : " (\(unreadable.count) unreadable, skipped)")")
print("  git merges cleanly:                 \(gitClean)")
print("    Relay the same bytes:             \(equal) (\(equal) / \(gitClean))")
print("    Relay a conflict copy:            \(relayConflicts.count)")
print("    Relay clean, other bytes:         \(different.count)")
print("  git conflicts:                      \(gitConflicts)")
print("    Relay merges cleanly anyway:      \(relayCleanWhereGitConflicts.count)")
if list {
    for (title, items) in [("Relay conflict, git clean", relayConflicts), ("Relay clean, other bytes", different),
                           ("Relay clean, git conflict", relayCleanWhereGitConflicts)] where !items.isEmpty {
        print("\n\(title):")
        for item in items { print("  " + item) }
    }
}

/// `--explain NAME`: the hunks of both sides (since the base) that overlap or touch, which make
/// Relay's conflicts in that case.
if let index = arguments.firstIndex(of: "--explain"), arguments.index(after: index) < arguments.endIndex {
    let name = arguments[arguments.index(after: index)]
    let folder = corpus + "/" + name
    if let base = text(folder + "/base"), let ours = text(folder + "/ours"), let theirs = text(folder + "/theirs") {
        let lines = LineDiff.lines(base[...])
        let mine = LineDiff(old: lines, new: LineDiff.lines(ours[...])).hunks
        let other = LineDiff(old: lines, new: LineDiff.lines(theirs[...])).hunks
        for a in mine {
            for b in other where a.oldRange.lowerBound <= b.oldRange.upperBound && b.oldRange.lowerBound <= a.oldRange.upperBound {
                print("\n\(name): ours \(a.oldRange) → \(a.newLines.count) lines, theirs \(b.oldRange) → \(b.newLines.count) lines")
                let low = max(0, min(a.oldRange.lowerBound, b.oldRange.lowerBound) - 2)
                let high = min(lines.count, max(a.oldRange.upperBound, b.oldRange.upperBound) + 2)
                for line in low..<high { print("  base \(line): \(lines[line].debugDescription.prefix(100))") }
                print("  ours:");  for line in a.newLines { print("    + \(line.debugDescription.prefix(100))") }
                print("  theirs:"); for line in b.newLines { print("    + \(line.debugDescription.prefix(100))") }
            }
        }
    }
}
