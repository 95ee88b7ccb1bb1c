import Glibc

extension Workspace {
    /// The versions `relay gc` removed from the store by the retention policy, one hash per
    /// line: so history can still list them, marked pruned, and a restore of one says why it
    /// cannot be done (a version missing for any other reason is reported as missing).
    var prunedFile: String { layout.state + "/pruned-versions" }

    /// The versions the retention policy pruned (a version stored again since is back in the
    /// store: check `objects.contains` too).
    public func prunedVersions() throws -> Set<ContentHash> {
        guard let snapshot = try FileSnapshot.read(prunedFile, displayPath: prunedFile) else { return [] }
        var hashes = Set<ContentHash>()
        for line in snapshot.bytes.split(separator: 10) where line.count == 64 {
            if let hash = ContentHash(hex: String(decoding: line, as: UTF8.self)) { hashes.insert(hash) }
        }
        return hashes
    }

    /// Appends `hashes` to the pruned list (before their objects go, so a crash in between leaves
    /// a version listed as pruned that is still there — harmless — never a gap).
    func recordPruned(_ hashes: [ContentHash]) throws {
        guard !hashes.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hashes.count * 65)
        for hash in hashes { bytes += Array(hash.hex.utf8); bytes.append(10) }
        let fd = try Syscall.open(prunedFile, O_WRONLY | O_APPEND | O_CREAT, mode: 0o644).orThrow("open", path: prunedFile)
        defer { Syscall.close(fd) }
        try bytes.withUnsafeBytes { try Syscall.writeAll(fd, $0).orThrow("write", path: prunedFile) }
        if durable { try Syscall.fsync(fd).orThrow("fsync", path: prunedFile) }
    }
}
