import Foundation
import Logging
import WorkspaceCore

/// Starts a relay on a file. The daemon provides one when the relay engine is present; without
/// one, relay triggers wait in the queue (they are not lost, and run once an engine is there).
///
/// The watcher's trigger row is the one record of whether a drop was handled and by which run:
/// it names the run (`runID(forTrigger:)`) and commits that name before the run exists, then
/// launches it under that name. After a crash the row, back to pending, launches the same name
/// again, and the engine resumes the run it finds there (or, finished, shows it again and asks
/// no model) instead of making a second.
public protocol RelayLauncher: Sendable {
    /// The id the run for the trigger row `number` gets (the engine's id format).
    func runID(forTrigger number: Int64) -> String

    /// Runs `relay` on the workspace file `path`, whose content settled with SHA-256 `hash`, as
    /// run `run`: created when there is no such run, resumed when there is. Returns when the
    /// run has finished — or at once, saying why, when the file holds other bytes by now: the
    /// run stands aside (the newer content has a trigger of its own), so new bytes never run
    /// under the old key.
    func launch(relay: String, path: String, hash: String, run: String) async throws -> RelayLaunch

    /// The runs an older Relay recorded for these triggers beside the watcher's ledger
    /// (`.relay/runs/by-trigger/`, trigger key → run id), nil where it recorded none: read once,
    /// when a queue from before rows named their runs is first opened, so a run under way at
    /// the upgrade is resumed, not started again.
    func runsRecordedBesideTheLedger(_ triggers: [(relay: String, path: String, hash: String)]) -> [String?]

    /// Removes those older records once their runs are named in the ledger.
    func forgetRunsRecordedBesideTheLedger()
}

/// How a relay trigger's run ended, besides an error.
public enum RelayLaunch: Sendable, Equatable {
    case finished
    /// The file no longer held the settled bytes when the run read it.
    case stoodAside(String)
}

/// Runs command triggers: `/bin/sh -c COMMAND` in the workspace root, with the file in the
/// environment, its output appended to `.relay/log/triggers.log`.
///
/// The command works on the bytes that settled: the file is copied (and hashed while copied)
/// to a private folder in memory (a large file: to `.relay/tmp/`) while `sh` starts, and `RELAY_SETTLED_FILE` names that copy, removed when
/// the command ends. `sh` waits for the runner's word before the command's first word; when the
/// copy does not hold the trigger's bytes the word is not given and the command never runs: it
/// stands aside for the newer content, which has (or gets) a trigger of its own.
/// `RELAY_PATH` and `RELAY_FILE` still name the workspace file, for a command that moves or
/// edits it — what they read may be newer than `RELAY_HASH` when someone saves again meanwhile.
struct TriggerRunner: Sendable {
    let workspace: Workspace
    let logger: Logger

    /// How a command trigger ended.
    enum Outcome: Equatable {
        case exited(status: Int32, note: String?)
        /// The file held other bytes than the trigger's when the command was to start.
        case stoodAside(String)
    }

    /// The environment a trigger command gets, besides the daemon's own.
    static func environment(workspace: Workspace, path: String, hash: String, rule: String, settledCopy: String) -> [String: String] {
        [
            "RELAY_PATH": path,
            "RELAY_FILE": workspace.root + "/" + path,
            "RELAY_SETTLED_FILE": settledCopy,
            "RELAY_HASH": hash,
            "RELAY_TRIGGER": rule,
            "RELAY_WORKSPACE": workspace.root,
        ]
    }

    /// Where the settled bytes of trigger row `id` are copied for its command (the file's own
    /// name last, so a tool that goes by the extension reads it as it would the file): a file
    /// up to `memoryCopyLimit` in the workspace's private folder in memory (`MemoryFolder`:
    /// a copy made and removed per command costs no disk metadata), a larger one, or any where
    /// there is no such folder, in `.relay/tmp/`.
    static func settledCopy(workspace: Workspace, id: Int64, path: String, size: Int?) -> String {
        let folder = (size ?? Int.max) <= memoryCopyLimit ? MemoryFolder.privateFolder(memoryFolderName(workspace)) : nil
        return (folder ?? workspace.layout.state + "/tmp") + "/trigger-\(id)-" + (path.split(separator: "/").last.map(String.init) ?? "file")
    }

    /// Files up to this size are copied into memory for their commands (a few at a time: one
    /// per running command).
    static let memoryCopyLimit = 1 << 20

    /// The name of the workspace's folder in memory: row numbers are the workspace's own, so
    /// two workspaces' daemons must not share one.
    static func memoryFolderName(_ workspace: Workspace) -> String {
        "watch-" + ContentHash(of: workspace.root).hex.prefix(16)
    }

    /// Removes the settled copies a killed daemon left (a command cut short by the kill runs
    /// again with a fresh copy); called at start, when no command of this workspace runs.
    static func removeLeftoverCopies(workspace: Workspace) {
        let folders = [workspace.layout.state + "/tmp", MemoryFolder.privateFolder(memoryFolderName(workspace))].compactMap { $0 }
        for folder in folders {
            for name in (try? StateFile.names(in: folder)) ?? [] where name.hasPrefix("trigger-") {
                _ = try? StateFile.remove(folder + "/" + name)
            }
        }
    }

    /// Removes the workspace's folder in memory once no command runs (a stopped daemon): a
    /// folder per workspace ever watched would pile up in /dev/shm until the next boot.
    static func removeMemoryFolder(workspace: Workspace) {
        if let folder = MemoryFolder.privateFolder(memoryFolderName(workspace)) { try? StateFile.removeFolder(folder) }
    }

    /// Test hook (RELAY_WATCH_TEST_COPY_GATE): a FIFO the runner reads to its end after the
    /// command has started and before the settled copy is made, leaving `FIFO.reached` to say
    /// it waits — a test rewrites the file there.
    var copyGate: String? = nil

    /// The line `sh` runs before the command: it waits for the runner's word on its standard
    /// input (a newline once the settled copy holds the trigger's bytes; end of input when it
    /// does not) and stops there without one. On the command's first line, so the line numbers
    /// `sh` reports are the command's own.
    static let waitForTheCopy = "read -r _ || exit 75; "

    /// How making the settled copy went: it holds the trigger's bytes, or the command stands
    /// aside (the file changed), or it could not be made.
    enum Copied: Sendable {
        case holdsTheSettledBytes
        case standsAside(String)
        case failed(String)
    }

    /// Starts the command and returns at once; `ended` is called with the outcome (on a thread
    /// of the runner's own, or at once when `sh` cannot be started).
    ///
    /// `sh` is started on the caller's thread — the watcher's, running already, right after
    /// the commit that marked the row `running` — and not on a thread made for it: on a busy
    /// machine a new thread waited milliseconds for a processor before it could start `sh`,
    /// which then waited again. The copy is made while `sh` loads (a process start costs more
    /// than a small file's copy) — on the caller's thread too for a copy in memory (up to
    /// `memoryCopyLimit`), on the runner's thread for a larger one or with the test hook's
    /// gate — and the command itself runs only once the copy is known to hold the trigger's
    /// bytes: never new bytes under the old key. The wait is the runner's thread's.
    func start(command: String, id: Int64, path: String, hash: String, rule: String, ended: @escaping @Sendable (Outcome) -> Void) {
        let workspace = self.workspace, copyGate = self.copyGate
        let size = workspace.stamp(ofFileAt: path)?.size
        let copy = Self.settledCopy(workspace: workspace, id: id, path: path, size: size)
        let environment = ProcessInfo.processInfo.environment.merging(
            Self.environment(workspace: workspace, path: path, hash: hash, rule: rule, settledCopy: copy)) { _, new in new }
        @Sendable func makeTheCopy() -> Copied {
            do {
                if let copyGate { Self.waitAtGate(copyGate) }
                try StateFile.makeFolders((copy as NSString).deletingLastPathComponent)
                let copied = try workspace.copy(ofFileAt: path, to: copy)
                if let copied, copied.hex == hash { return .holdsTheSettledBytes }
                return .standsAside(copied == nil
                    ? "\(path) was gone or kept changing when its command was to start; the run for its newer content stands in"
                    : "\(path) changed after it settled (its trigger's content \(hash.prefix(12)), the file's now \(copied!.hex.prefix(12))): the run for the newer content stands in")
            } catch let error as WorkspaceError {
                return .failed(error.message)
            } catch {
                return .failed("\(error)")
            }
        }
        let started: ChildProcess.Started
        do {
            let folder = workspace.layout.state + "/log"
            try StateFile.makeFolders(folder)
            started = try ChildProcess.start(
                ["/bin/sh", "-c", Self.waitForTheCopy + command], environment: environment, directory: workspace.root,
                appendingOutputTo: folder + "/triggers.log", header: Array("--- \(Timestamp.iso8601()) \(rule): \(path)\n".utf8))
        } catch {
            ended(.exited(status: 127, note: "could not run the command: \((error as? WorkspaceError)?.message ?? "\(error)")"))
            return
        }
        // A copy in memory is made here, while `sh` loads; a larger one (in `.relay/tmp/`), or
        // one the test hook holds, on the runner's thread, which must not hold the watcher.
        let inMemory = !copy.hasPrefix(workspace.layout.state + "/")
        let copiedHere: Copied? = inMemory && copyGate == nil ? makeTheCopy() : nil
        if let copiedHere { started.answer(copiedHere.proceeds) }
        // The wait blocks a thread: one of its own, not one of the cooperative pool the
        // watcher and the HTTP server share.
        Thread {
            let copied: Copied
            if let copiedHere {
                copied = copiedHere
            } else {
                copied = makeTheCopy()
                started.answer(copied.proceeds)
            }
            let status = started.wait()
            _ = try? StateFile.remove(copy)
            switch copied {
            case .holdsTheSettledBytes:
                ended(.exited(status: status, note: status == 0 ? nil : "exited with status \(status); see .relay/log/triggers.log"))
            case .standsAside(let note):
                ended(.stoodAside(note))
            case .failed(let message):
                ended(.exited(status: 127, note: "could not run the command: \(message)"))
            }
        }.start()
    }

    /// The test hook's wait: `FIFO.reached`, then the FIFO read until its writer closes it.
    private static func waitAtGate(_ fifo: String) {
        _ = try? StateFile.replace(fifo + ".reached", with: [], durable: false)
        // Opening a FIFO waits for its writer; reading it, for the writer to close it.
        _ = try? StateFile.read(fifo)
    }
}

extension TriggerRunner.Copied {
    /// Whether `sh` is told to go on to the command.
    var proceeds: Bool { if case .holdsTheSettledBytes = self { true } else { false } }
}
