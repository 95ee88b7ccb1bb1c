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
        let records = try options.open().history(target.path)
        if json {
            for record in records { try printJSON(record) }
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
            let kept = record.replacedStored ? "" : "  (too large, not kept)"
            print("\(when)  \(replaced.short)  \(formatBytes(record.replacedSize ?? 0)) replaced by \(record.operation) with \(record.installed.short)\(kept)")
        }
    }
}
