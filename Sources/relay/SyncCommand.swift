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
            an edit keeps the edit. Deleting more than relay.json's "sync" massDeletionThreshold \
            (default half) of a replica's files at once needs --force: the same rules `relay \
            watch` syncs by, and a sync that goes through releases a peer sync the daemon held \
            (`relay status` shows it). \
            After a sync that left nothing over, the next one between the same two replicas looks \
            only at the files written on either side since; --full looks at every file.

            PEER is another workspace folder (a USB disk, a mounted share), or [user@]host:path \
            over ssh, which runs `relay sync-serve --stdio path` there (relay must be installed on \
            that machine; --remote-relay names it if it is not on PATH). RELAY_SSH replaces the \
            ssh command, e.g. RELAY_SSH="ssh -p 2222". A PEER folder that is missing or empty \
            becomes a new replica of this workspace: it gets a replica id of its own and every \
            file, and later syncs merge from what the two then share.

            Examples:
              relay sync /media/usb/notes
              relay sync ada@desktop:notes    # a new replica if notes/ is missing there
              relay sync --dry-run ../notes-copy
              relay sync --json /mnt/backup/notes
              relay sync --local        # fold Syncthing's conflict copies back in
            """
    )

    @OptionGroup var options: WorkspaceOptions
    @Argument(help: ArgumentHelp("The other replica: a workspace folder, or [user@]host:path.", valueName: "peer"))
    var peer: String?
    @Flag(help: "Only fold Syncthing's *.sync-conflict-* copies back into their originals.") var local = false
    @Flag(help: "Show what would change, change nothing.") var dryRun = false
    @Flag(help: "Propagate a mass deletion.") var force = false
    @Flag(help: "Look at every file, not only those written since the last clean sync.") var full = false
    @Flag(help: "Print the summary as JSON.") var json = false
    @Option(help: ArgumentHelp("The relay program on the ssh peer (default: relay on its PATH).", valueName: "path"))
    var remoteRelay = "relay"

    func validate() throws {
        if peer == nil && !local { throw ValidationError("give the other replica (a folder or [user@]host:path), or --local") }
    }

    func run() throws {
        if local { return try resolveSyncthingCopies() }
        guard let peer else { return }
        var timings = SyncTimings("relay sync")
        let local = try options.open()
        // The workspace's rules, the same the daemon's peer sync obeys (a bad value is an error
        // naming relay.json's line, before anything is opened).
        let policy = try SyncPolicy.load(from: local)
        let address = PeerAddress(peer, relativeTo: FileManager.default.currentDirectoryPath)
        // Over ssh the peer is started first, and its answer read once this side has refreshed:
        // the two start up and walk their trees at the same time. A missing or empty folder
        // becomes a replica of this workspace (not in a dry run, which changes nothing): the
        // sync fills it.
        let remote = try SyncPolicy.connect(to: address, from: local, startReplica: !dryRun, remoteRelay: remoteRelay,
                                            walkAhead: true, waitForHello: false)
        let localEndpoint = try LocalEndpoint(workspace: local, walkAhead: true)
        // While ssh connects this side has time to spare: the index's log is checkpointed then,
        // before this side's refresh (a checkpoint cannot finish under an open transaction).
        if address.isRemote { try? localEndpoint.index.checkpoint() }
        timings.mark("opened")
        var settings = policy.reconcilerOptions(force: force, dryRun: dryRun)
        settings.examineAll = full
        settings.leaveIndexesForExit = true
        let progress = SyncProgressDisplay(enabled: !json, terminal: isatty(2) == 1)
        var summary = try Reconciler(local: localEndpoint, peer: remote, options: settings, logger: RelayLogging.logger).run(progress: progress.show)
        timings.mark("ran")
        // A sync that went through releases a peer sync the daemon held for this peer (on
        // either side, when the peer is a folder here).
        var released = false
        if !dryRun {
            for location in Set([remote.location, address.location]) where try SyncHold.release(location, in: local) { released = true }
            if let peerWorkspace = (remote as? LocalEndpoint)?.workspace { try SyncHold.release(local.root, in: peerWorkspace) }
        }
        // The peer over ssh is told bye and waited for, whatever is printed.
        defer {
            (remote as? RemoteEndpoint)?.close()
            timings.mark("closed")
            timings.markPeakMemory()
        }
        summary.startedReplica = (remote as? LocalEndpoint)?.startedReplica == true || (remote as? RemoteEndpoint)?.startedReplica == true
        if json { return try printJSON(summary) }
        if released { print("Released the daemon's held sync with \(remote.location): it syncs again after the next change") }
        if summary.startedReplica { print("Started a new replica of this workspace at \(remote.location) (replica \(remote.replica))") }
        for action in summary.actions { print((dryRun ? "would " : "") + action) }
        let verb = dryRun ? "Would sync" : "Synced"
        print("\(verb) with \(remote.location): \(summary.copied) copied, \(summary.merged) merged, \(summary.deleted) deleted, "
              + "\(summary.conflicts) conflict\(summary.conflicts == 1 ? "" : "s"), \(formatBytes(summary.bytes))")
        if !summary.skipped.isEmpty {
            print("Left for the next sync (changed while syncing): " + summary.skipped.joined(separator: ", "))
        }
        if !summary.refused.isEmpty {
            print("Refused from the peer (paths outside the workspace or in .relay/): " + summary.refused.joined(separator: ", "))
        }
        if !summary.clashes.isEmpty {
            print("Left alone (a file on one side, a folder of the same name on the other; rename one): "
                  + summary.clashes.joined(separator: ", "))
        }
        if !summary.tooLargeToMerge.isEmpty {
            print("Too large to merge line by line (one version kept in the file, the other in a conflict copy): "
                  + summary.tooLargeToMerge.joined(separator: ", "))
        }
        if summary.conflicts > 0 { print("See them with `relay conflicts`.") }
    }

    private func resolveSyncthingCopies() throws {
        let outcome = try SyncthingConflicts.resolve(in: try options.open())
        if json { return try printJSON(outcome) }
        for copy in outcome.merged { print("merged and removed: \(copy)") }
        for copy in outcome.left { print("left for you (overlapping changes): \(copy)") }
        print("Syncthing conflict copies: \(outcome.merged.count) merged, \(outcome.left.count) left")
    }
}
