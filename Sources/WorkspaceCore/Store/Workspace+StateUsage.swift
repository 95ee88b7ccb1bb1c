extension Workspace {
    /// The space each kind of engine state takes in `.relay/` (allocated blocks), largest
    /// first: `relay status` shows it, so a person sees what `relay gc` would work on.
    ///
    /// For example: `[("versions", 48_234_496), ("runs", 9_412_608), ("sync index", 1_204_224), …]`.
    /// - parameter skipping: top-level entries a caller measures its own way (`relay status`
    ///   takes the runs' size from the run store's index, not from a walk of 10,000 folders).
    public func stateUsage(skipping: Set<String> = []) -> [(kind: String, bytes: Int)] {
        var usage: [String: Int] = [:]
        guard case .success(let names) = Syscall.listDirectory(layout.state) else { return [] }
        for name in names where !skipping.contains(name) {
            usage[Self.stateKind(name), default: 0] += Self.diskUsage(layout.state + "/" + name)
        }
        return usage.map { ($0.key, $0.value) }.sorted { ($0.bytes, $1.kind) > ($1.bytes, $0.kind) }
    }

    /// What a top-level entry of `.relay/` holds, in a person's words.
    static func stateKind(_ name: String) -> String {
        switch name {
        case "objects": return "versions"
        case "history", "pruned-versions": return "version history"
        case "runs": return "runs"
        case "trash": return "trash"
        case "locks": return "locks"
        default:
            if name.hasPrefix("sync") { return "sync index" }
            if name.hasPrefix("watch") || name.hasPrefix("queue") || name.hasPrefix("triggers") { return "watcher" }
            if name.hasSuffix(".log") || name == "logs" || name == "log" { return "logs" }
            return "other"
        }
    }

    /// Allocated bytes of a file, or of a folder and everything in it; links are not followed
    /// (0 for a path that is not there).
    public static func diskUsage(_ path: String) -> Int {
        guard case .success(let info) = Syscall.lstat(path) else { return 0 }
        var total = Int(info.st_blocks) * 512
        if FileKind(info.st_mode) == .directory, case .success(let names) = Syscall.listDirectory(path) {
            for name in names { total += diskUsage(path + "/" + name) }
        }
        return total
    }
}
