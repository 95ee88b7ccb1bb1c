import ArgumentParser
import Foundation
import WorkspaceCore
import WorkspaceSync

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Reconcile this workspace with another replica of it, losing no edit.",
        discussion: """
            Both replicas end up with the same files. A file changed on one side is copied; a file \
            changed on both is merged (text line by line, journals by appended entries, chat \
            transcripts by message); what cannot be merged keeps one version in the file and the \
            other in a conflict copy next to it (`relay conflicts` lists them). A delete against \
            an edit keeps the edit. Deleting most of a replica's files at once needs --force.

            PEER is another workspace folder (a USB disk, a mounted share). The ssh transport \
            ([user@]host:path) is not built yet.

            Examples:
              relay sync /media/usb/notes
              relay sync --dry-run ../notes-copy
              relay sync --json /mnt/backup/notes
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @Argument(help: ArgumentHelp("The other replica: a workspace folder.", valueName: "peer"))
    var peer: String
    @Flag(help: "Show what would change, change nothing.") var dryRun = false
    @Flag(help: "Propagate a mass deletion.") var force = false
    @Flag(help: "Print the summary as JSON.") var json = false

    func run() throws {
        if peer.contains(":") && !peer.hasPrefix("/") && !peer.hasPrefix(".") && !FileManager.default.fileExists(atPath: peer) {
            throw CommandFailure(message: "\(peer): syncing over ssh is not built yet; sync with a folder (e.g. a mounted disk)", status: 2)
        }
        let local = try options.open()
        let remote = try Workspace.open(at: peer)
        var settings = Reconciler.Options()
        settings.dryRun = dryRun
        settings.force = force
        if let share = try? Self.massDeletionShare(local) { settings.massDeletionShare = share }
        let showProgress = !json && isatty(2) == 1
        let summary: SyncSummary
        do {
            summary = try Reconciler(local: local, peer: remote, options: settings, logger: RelayLogging.logger).run { done, total in
                guard showProgress, total > 0, done % 50 == 0 || done == total else { return }
                let width = 30, filled = width * done / total
                Terminal.standardError("\r  [" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled) + "] \(done)/\(total) paths")
                if done == total { Terminal.standardError("\n") }
            }
        } catch let error as SyncError {
            throw CommandFailure(message: error.message)
        }
        if json { return try printJSON(summary) }
        for action in summary.actions { print((dryRun ? "would " : "") + action) }
        let verb = dryRun ? "Would sync" : "Synced"
        print("\(verb) with \(remote.root): \(summary.copied) copied, \(summary.merged) merged, \(summary.deleted) deleted, "
              + "\(summary.conflicts) conflict\(summary.conflicts == 1 ? "" : "s"), \(formatBytes(summary.bytes))")
        if !summary.skipped.isEmpty {
            print("Left for the next sync (changed while syncing): " + summary.skipped.joined(separator: ", "))
        }
        if summary.conflicts > 0 { print("See them with `relay conflicts`.") }
    }

    /// `"sync": {"massDeletionThreshold": 0.5}` in relay.json.
    static func massDeletionShare(_ workspace: Workspace) throws -> Double? {
        let root = try ConfigurationObject(parsing: try workspace.read("relay.json"), file: "relay.json")
        return try root.optionalObject("sync")?.optionalNumber("massDeletionThreshold", in: 0...1)
    }
}

struct ConflictsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "List the conflict copies sync made that are still there.",
        discussion: """
            When both replicas changed the same lines (or a file that cannot be merged), the file \
            keeps one version and the other goes to NAME.conflict-DATE-REPLICA.EXT next to it. \
            Compare the two, keep what you want in the file, and delete the copy: that resolves it.

            Examples:
              relay conflicts
              relay conflicts --json
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @Flag(help: "Print one JSON object per conflict.") var json = false

    func run() throws {
        let conflicts = try SyncIndex(workspace: options.open()).openConflicts()
        if conflicts.isEmpty { print("No open conflicts."); return }
        for conflict in conflicts {
            if json {
                struct Row: Codable { var path, copy: String; var time: Date }
                try printJSON(Row(path: conflict.path, copy: conflict.copy, time: conflict.time))
            } else {
                print("\(conflict.path)  ←  \(conflict.copy)")
            }
        }
    }
}
