import ArgumentParser
import Foundation
import WorkspaceCore

struct FSHistory: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the versions of a file that Relay replaced and kept.",
        discussion: """
            Every time Relay replaces a file (a write, an update, a restore), the version it \
            displaces goes to the workspace's store. Restore one with `relay fs restore`.

            Examples:
              relay fs history context.md
              relay fs history context.md --json
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @OptionGroup var target: PathArgument
    @Flag(help: "Print one JSON object per replacement.") var json = false

    func run() throws {
        let workspace = try options.open()
        let records = try workspace.history(target.path)
        // A version the retention policy pruned is still listed, marked (`relay gc`).
        let prunedVersions = try workspace.prunedVersions()
        func pruned(_ record: VersionRecord) -> Bool {
            guard let replaced = record.replaced, record.replacedStored else { return false }
            return prunedVersions.contains(replaced) && !workspace.objects.contains(replaced)
        }
        if json {
            for record in records { try printHistoryLine(record, pruned: pruned(record)) }
            return
        }
        if records.isEmpty {
            print("\(target.path): no versions kept yet (Relay has not replaced it)")
            return
        }
        for record in records.reversed() {
            let when = Timestamp.localDateTime(Date(timeIntervalSince1970: Double(record.timeNanoseconds) / 1e9))
            guard let replaced = record.replaced else {
                print("\(when)  created by \(record.operation) as \(record.installed.short)")
                continue
            }
            let kept = pruned(record) ? "  (pruned by the retention policy)" : record.replacedStored ? "" : "  (too large, not kept)"
            print("\(when)  \(replaced.short)  \(formatBytes(record.replacedSize ?? 0)) replaced by \(record.operation) with \(record.installed.short)\(kept)")
        }
    }
}

/// A history line for `--json`: the record's fields, and `"pruned": true` for a version the
/// retention policy pruned.
func printHistoryLine(_ record: VersionRecord, pruned: Bool) throws {
    var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(record)) as? [String: Any] ?? [:]
    object["pruned"] = pruned
    Terminal.standardOutput(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) + [10])
}
