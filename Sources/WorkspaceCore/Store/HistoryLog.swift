import Foundation
import Glibc
import Synchronization

/// The history lines of write batches: one file per batch in `.relay/history/batches/`,
/// instead of a line appended to each path's own `history/<key>.jsonl`.
///
/// A sync's batch replaces up to a thousand files; a line per path meant opening (on a first
/// sync, creating) a history file per path — on this machine ~1 of every 4 files a first sync
/// made, and, for a change set, an append that read the cold last block of each path's file
/// first. A batch now writes its lines with one encoder into one new file, made durable by the
/// batch's second flush like the rest. Single writes (`Workspace.write`, `update`) still append
/// to the path's own file.
///
/// `Workspace.history(path)` reads both: the path's file, and the lines of every batch file
/// that name it (a substring test before any line is decoded). The batch files stay few: once
/// there are `compactionThreshold` of them, the small ones are merged into one, in the
/// background, under an exclusive lock of the folder. A merged file is in place before its
/// inputs go, so a crash leaves a line in two files at worst, and the reader drops byte-equal
/// duplicates.
enum HistoryLog {
    /// Batch files smaller than this are merged; larger ones are left as they are, so that a
    /// merge never rewrites much.
    static let mergeableSize = 1 << 20
    /// How many batch files make a merge worthwhile.
    static let compactionThreshold = 64
    private static let compacting = Mutex<Set<String>>([])
    static let temporaryPrefix = ".tmp-"

    /// The encoder of history lines (per-path files and batch files alike).
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Writes `records` as one new batch file in `folder` (made if missing): written under a
    /// temporary name and renamed, so a reader or a merge never sees it half written. Not
    /// synced: the caller's flush makes it durable with the files it describes.
    static func write(_ records: [VersionRecord], in folder: String) throws {
        guard !records.isEmpty else { return }
        let encoder = encoder()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(records.count * 320)
        for record in records {
            // The encoder's bytes, written by hand where that is easy to get exactly right (a
            // first sync writes a line per file it copies; JSONEncoder was a tenth of each
            // batch's commit).
            if !line(record, into: &bytes) { bytes.append(contentsOf: try encoder.encode(record)) }
            bytes.append(10)
        }
        let suffix = randomSuffix()
        let temporary = folder + "/" + temporaryPrefix + suffix
        var created = Syscall.createFile(temporary, bytes: bytes, sync: false)
        if case .failure(.noSuchFileOrDirectory) = created {
            // The history folder of an older workspace, then its batches/.
            if let slash = folder.lastIndex(of: "/") { _ = Syscall.mkdir(String(folder[..<slash])) }
            _ = Syscall.mkdir(folder)
            created = Syscall.createFile(temporary, bytes: bytes, sync: false)
        }
        try created.orThrow("write history", path: temporary)
        // Named by time, so that the names sort oldest first.
        let time = String(Syscall.nowNanoseconds())
        let name = String(repeating: "0", count: max(0, 20 - time.count)) + time + "-" + suffix + ".jsonl"
        try Syscall.rename(temporary, folder + "/" + name).orThrow("name history", path: temporary)
    }

    /// Appends `record` as `encoder()` would write it (sorted keys, no escaped slashes, nil
    /// fields left out) and returns true; returns false, appending nothing, when its path or
    /// operation holds a character JSON escapes (a quote, a backslash, a control character).
    static func line(_ record: VersionRecord, into bytes: inout [UInt8]) -> Bool {
        func plain(_ text: String) -> Bool { !text.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
        guard plain(record.path), plain(record.operation) else { return false }
        func key(_ name: String) { bytes.append(0x22); bytes.append(contentsOf: name.utf8); bytes.append(contentsOf: "\":".utf8) }
        func text(_ value: String) { bytes.append(0x22); bytes.append(contentsOf: value.utf8); bytes.append(0x22) }
        func number<N: BinaryInteger>(_ value: N) { bytes.append(contentsOf: String(value).utf8) }
        bytes.append(0x7B)
        key("installed"); text(record.installed.hex); bytes.append(0x2C)
        key("installedSize"); number(record.installedSize); bytes.append(0x2C)
        key("operation"); text(record.operation); bytes.append(0x2C)
        key("path"); text(record.path); bytes.append(0x2C)
        if let replaced = record.replaced { key("replaced"); text(replaced.hex); bytes.append(0x2C) }
        if let size = record.replacedSize { key("replacedSize"); number(size); bytes.append(0x2C) }
        key("replacedStored"); bytes.append(contentsOf: (record.replacedStored ? "true" : "false").utf8); bytes.append(0x2C)
        key("timeNanoseconds"); number(record.timeNanoseconds)
        bytes.append(0x7D)
        return true
    }

    /// The batch files of `folder`, oldest first (none when it does not exist).
    static func files(in folder: String) -> [String] {
        guard case .success(let names) = Syscall.listDirectory(folder) else { return [] }
        return batchFiles(names)
    }

    /// The batch files among `names` (not the temporaries), oldest first.
    private static func batchFiles(_ names: [String]) -> [String] {
        names.filter { $0.hasSuffix(".jsonl") && !$0.hasPrefix(temporaryPrefix) }.sorted()
    }

    /// The records of `path` in the batch files of `folder`, in file order. A line cut short
    /// (a crash while it was written) is skipped; a line in two files (a merge interrupted
    /// after its output was in place) counts once.
    static func records(of path: String, in folder: String) throws -> [VersionRecord] {
        // The path as the encoder writes it, with its key: a line that lacks it is not decoded.
        var needle = Array(#""path":"#.utf8)
        needle.append(contentsOf: try encoder().encode(path))
        let decoder = JSONDecoder()
        var seen = Set<Line>()
        var records: [VersionRecord] = []
        func collect(_ bytes: [UInt8]) {
            for line in bytes.split(separator: 10) where line.count > needle.count && contains(line, needle) {
                guard seen.insert(Line(line)).inserted else { continue }
                if let record = try? decoder.decode(VersionRecord.self, from: Data(line)), record.path == path {
                    records.append(record)
                }
            }
        }
        var read = Set<String>()
        var listAgain = true
        while listAgain {
            listAgain = false
            for name in files(in: folder) where read.insert(name).inserted {
                let file = folder + "/" + name
                // Gone since it was listed: merged into a file this listing did not have.
                guard let snapshot = try FileSnapshot.read(file, displayPath: file) else {
                    listAgain = true
                    continue
                }
                collect(snapshot.bytes)
            }
        }
        return records
    }

    /// A line as a set member, hashed in one pass over its bytes (an `ArraySlice` hashes
    /// byte by byte: most of a merge's time went there).
    struct Line: Hashable {
        let bytes: ArraySlice<UInt8>
        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        static func == (a: Line, b: Line) -> Bool { a.bytes.elementsEqual(b.bytes) }
    }

    private static func contains(_ line: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, line.count >= needle.count else { return false }
        var index = line.startIndex
        let last = line.endIndex - needle.count
        while index <= last {
            if line[index] == first && line[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// Merges the small batch files of `folder` in the background (`Housekeeping`, at the
    /// lowest priority) when there are many.
    static func compactLater(_ folder: String) {
        guard compacting.withLock({ $0.insert(folder).inserted }) else { return }
        Housekeeping.run {
            _ = try? compact(folder)
            _ = compacting.withLock { $0.remove(folder) }
        }
    }

    /// Merges the batch files under `mergeableSize` into one when there are at least
    /// `threshold` of them, holding the folder's lock: another merge under way (this process's
    /// in the background, or another's) means nothing is done, unless `waiting`, which waits
    /// for it to end first. Returns how many files were merged.
    @discardableResult
    static func compact(_ folder: String, threshold: Int = compactionThreshold, waiting: Bool = false) throws -> Int {
        guard case .success(let fd) = Syscall.open(folder, O_RDONLY | O_DIRECTORY) else { return 0 }
        defer { Syscall.close(fd) }
        guard case .success = Syscall.flockExclusive(fd, wait: waiting) else { return 0 }
        defer { Syscall.flockRelease(fd) }
        guard case .success(let names) = Syscall.listDirectory(fd) else { return 0 }
        // A temporary no writer has renamed for a minute was left by a killed process.
        let now = Syscall.nowNanoseconds()
        for name in names where name.hasPrefix(temporaryPrefix) {
            if let identity = try? FileSnapshot.identity(folder + "/" + name, displayPath: name),
               now - identity.modifiedNanoseconds > 60_000_000_000 {
                _ = Syscall.unlink(folder + "/" + name)
            }
        }
        let small = batchFiles(names).filter { name in
            guard let identity = try? FileSnapshot.identity(folder + "/" + name, displayPath: name) else { return false }
            return identity.size < mergeableSize
        }
        guard small.count >= max(threshold, 2) else { return 0 }
        var merged: [UInt8] = []
        var seen = Set<Line>()
        for name in small {
            guard let snapshot = try FileSnapshot.read(folder + "/" + name, displayPath: name) else { continue }
            for line in snapshot.bytes.split(separator: 10) where seen.insert(Line(line)).inserted {
                merged.append(contentsOf: line)
                merged.append(10)
            }
        }
        let suffix = randomSuffix()
        let temporary = folder + "/" + temporaryPrefix + suffix
        try Syscall.createFile(temporary, bytes: merged, sync: true).orThrow("write history", path: temporary)
        // The oldest input's time, so the merged file sorts where its lines began.
        let time = small[0].prefix { $0 != "-" }
        try Syscall.rename(temporary, folder + "/\(time)-merged-\(suffix).jsonl").orThrow("name history", path: temporary)
        try Syscall.fsync(fd).orThrow("fsync", path: folder)
        for name in small { _ = Syscall.unlink(folder + "/" + name) }
        return small.count
    }
}
