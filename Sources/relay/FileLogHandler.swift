import Foundation
import WorkspaceCore
import Logging

/// Appends log lines to a file (the daemon's `.relay/log/watch.log`), one line per message
/// with its metadata, in the same shape as swift-log's stream handler.
struct FileLogHandler: LogHandler {
    let label: String
    /// Written through WorkspaceCore's system-call layer; nil when the log cannot be opened
    /// (the daemon then logs to standard error only).
    let file: AppendOnlyFile?
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String, path: String) {
        self.label = label
        self.file = try? AppendOnlyFile(path: path)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let details = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line = "\(Timestamp.iso8601()) \(event.level) \(label): \(event.message)\(details)\n"
        try? file?.append(Array(line.utf8), sync: false)
    }
}

extension RelayLogging {
    /// The daemon's logger: standard error at RELAY_LOG_LEVEL (default notice) and
    /// `.relay/log/watch.log` at info.
    static func daemonLogger(workspace: Workspace) -> Logger {
        let folder = workspace.layout.state + "/log"
        try? StateFile.makeFolders(folder)
        let level = ProcessInfo.processInfo.environment["RELAY_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .notice
        return Logger(label: "relay.watch") { label in
            var console = StreamLogHandler.standardError(label: label)
            console.logLevel = level
            var file = FileLogHandler(label: label, path: folder + "/watch.log")
            file.logLevel = min(level, .info)
            return MultiplexLogHandler([console, file])
        }
    }
}
