import Foundation
import WorkspaceSync

/// `relay sync`'s progress on standard error: on a terminal, a bar redrawn in place with the
/// paths looked at and the files and bytes moved; otherwise (a log, a pipe) a plain line at
/// most every two seconds and one at the end. Nothing with `--json`.
final class SyncProgressDisplay {
    let enabled: Bool
    let terminal: Bool
    /// A log's first line comes after one interval, not at the start.
    private var lastDrawn: Date
    private var printedAny = false

    init(enabled: Bool, terminal: Bool) {
        self.enabled = enabled
        self.terminal = terminal
        lastDrawn = terminal ? .distantPast : Date()
    }

    func show(_ progress: SyncProgress) {
        guard enabled, progress.pathsTotal > 0 else { return }
        let now = Date()
        let interval = terminal ? 0.1 : 2.0
        guard progress.finished || now.timeIntervalSince(lastDrawn) >= interval else { return }
        // A plain log gets no line for a sync that finished before the first interval.
        if !terminal && progress.finished && !printedAny { return }
        lastDrawn = now
        printedAny = true
        Terminal.standardError(terminal ? "\r" + Self.bar(progress) + (progress.finished ? "\n" : "") : Self.line(progress) + "\n")
    }

    /// `  [██████········] 4000/10000 paths · 150 files · 5.7 MiB`
    static func bar(_ progress: SyncProgress, width: Int = 24) -> String {
        let filled = width * progress.pathsDone / max(1, progress.pathsTotal)
        return "  [" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled) + "] "
            + "\(progress.pathsDone)/\(progress.pathsTotal) paths · \(progress.files) file\(progress.files == 1 ? "" : "s") · \(formatBytes(progress.bytes))"
    }

    /// `sync: 4000/10000 paths, 150 files, 5.7 MiB`
    static func line(_ progress: SyncProgress) -> String {
        "sync: \(progress.pathsDone)/\(progress.pathsTotal) paths, \(progress.files) file\(progress.files == 1 ? "" : "s"), \(formatBytes(progress.bytes))"
    }
}
