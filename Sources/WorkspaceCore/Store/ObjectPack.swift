import Glibc
import Synchronization

/// Many stored versions in one file of the object store, `.relay/objects/packs/pack-….pack`:
/// what a `WriteBatch` that stores more than `WriteBatch.loosePerBatch` versions writes instead
/// of a file per version.
///
/// A first sync stores every text file's version as a merge base on both sides — one new file
/// per text file on each, and on this VM's ext4 without a journal each new file costs the
/// kernel's inode allocator a scan past every recently deleted inode of its group (`perf`:
/// half of a first sync's CPU was `recently_deleted`). A pack is one new file per batch.
///
/// The format: the versions' bytes one after another, then a table of one 80-byte entry per
/// version (its hash in 64 hex digits, then its offset and length, little-endian 64-bit), then
/// the number of entries (64-bit) and the 8 bytes `RLYPACK1`. A pack is written as a temporary
/// in the store's folder, flushed with the batch's first flush, then renamed into `packs/`
/// (made durable by the batch's second flush), and never changed after: like a loose object,
/// a version is in the store from that rename on. A pack whose table does not fit its file is
/// ignored (its versions are missing, as a lost loose object would be).
enum ObjectPack {
    static let magic = Array("RLYPACK1".utf8)
    static let entryLength = 80
    static let footerLength = 16

    /// Where a version sits in a pack.
    struct Location: Sendable {
        var pack: String
        var offset: Int
        var length: Int
    }

    /// A pack being written: versions are appended as they are stored, the table at `finish`.
    final class Writer {
        let temporary: String
        private var fd: CInt
        private var offset = 0
        private var table: [UInt8] = []
        private(set) var count = 0

        init(in folder: String) throws {
            temporary = folder + "/" + WorkspaceLayout.temporaryPrefix + "pack-" + randomSuffix()
            fd = try Syscall.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o444).orThrow("create pack", path: temporary)
        }

        deinit { if fd >= 0 { Syscall.close(fd) } }

        func append(_ bytes: [UInt8], hash: ContentHash) throws {
            try bytes.withUnsafeBytes { try Syscall.writeAll(fd, $0).orThrow("write pack", path: temporary) }
            table += Array(hash.hex.utf8)
            table += ObjectPack.littleEndian(offset)
            table += ObjectPack.littleEndian(bytes.count)
            offset += bytes.count
            count += 1
        }

        /// Writes the table and the footer and closes the file (not flushed: the batch does).
        func finish() throws {
            var tail = table
            tail += ObjectPack.littleEndian(count)
            tail += ObjectPack.magic
            try tail.withUnsafeBytes { try Syscall.writeAll(fd, $0).orThrow("write pack", path: temporary) }
            Syscall.close(fd)
            fd = -1
        }
    }

    static func littleEndian(_ value: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt64(value).littleEndian) { Array($0) }
    }

    static func readLittleEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        var value: UInt64 = 0
        for (shift, byte) in bytes.prefix(8).enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
        return value > UInt64(Int.max) ? -1 : Int(value)
    }

    /// The table of the pack at `path`: hash (hex) → where its bytes are; nil when the file is
    /// not a whole pack.
    static func readTable(_ path: String) -> [String: Location]? {
        guard case .success(let fd) = Syscall.open(path, O_RDONLY) else { return nil }
        defer { Syscall.close(fd) }
        guard case .success(let info) = Syscall.fstat(fd) else { return nil }
        let size = Int(info.st_size)
        guard size >= footerLength, case .success(let footer) = Syscall.pread(fd, count: footerLength, offset: size - footerLength),
              footer.count == footerLength, Array(footer[8...]) == magic else { return nil }
        let count = readLittleEndian(footer[0..<8])
        guard count >= 0, count <= (size - footerLength) / entryLength else { return nil }
        let tableStart = size - footerLength - count * entryLength
        guard case .success(let table) = Syscall.pread(fd, count: count * entryLength, offset: tableStart),
              table.count == count * entryLength else { return nil }
        var locations: [String: Location] = [:]
        locations.reserveCapacity(count)
        for index in 0..<count {
            let entry = table[(index * entryLength)..<((index + 1) * entryLength)]
            let hex = String(decoding: entry.prefix(64), as: UTF8.self)
            let offset = readLittleEndian(entry.dropFirst(64).prefix(8)), length = readLittleEndian(entry.dropFirst(72))
            guard offset >= 0, length >= 0, offset <= tableStart, length <= tableStart - offset else { return nil }
            locations[hex] = Location(pack: path, offset: offset, length: length)
        }
        return locations
    }

    /// The packs of each store this process has looked in: their tables, and the stamp of the
    /// `packs/` folder when it was listed (a new pack renamed in changes it).
    private struct Known {
        var stamp: FileStamp?
        var listedAt: Int64 = 0
        var packs: Set<String> = []
        var locations: [String: Location] = [:]
    }

    private static let known = Mutex<[String: Known]>([:])

    /// Where `hash` is in the packs of `folder`, if any. The tables are read once per process
    /// and again only for packs added since (the folder's stamp moved, or it was listed within
    /// a timestamp tick of its last change, when another pack may have landed unseen).
    static func locate(_ hash: ContentHash, packs folder: String) -> Location? {
        known.withLock { all in
            if let location = all[folder]?.locations[hash.hex] { return location }
            // Updated in place: a copy of the entry taken out and put back made each new pack's
            // merge copy every location known (per batch of a first sync, the whole table).
            return look(in: folder, for: hash, &all[folder, default: Known()])
        }
    }

    /// Lists `folder` again if it may have new packs, reads their tables into `entry`, and
    /// looks up `hash` there.
    private static func look(in folder: String, for hash: ContentHash, _ entry: inout Known) -> Location? {
        let stamp: FileStamp?
        switch Syscall.lstat(folder) {
        case .success(let info): stamp = FileStamp(FileIdentity(info))
        case .failure: stamp = nil
        }
        let racy = stamp.map { $0.modifiedNanoseconds + 20_000_000 >= entry.listedAt } ?? false
        guard stamp != entry.stamp || racy, stamp != nil || !entry.packs.isEmpty else { return nil }
        entry.stamp = stamp
        entry.listedAt = Syscall.nowNanoseconds()
        for name in (try? Syscall.listDirectory(folder).get()) ?? [] where name.hasSuffix(".pack") && !entry.packs.contains(name) {
            guard let table = readTable(folder + "/" + name) else { continue }
            entry.packs.insert(name)
            entry.locations.merge(table) { old, _ in old }
        }
        return entry.locations[hash.hex]
    }

    /// Forgets what is known of `folder` (a pack was just added by this process).
    static func forget(packs folder: String) {
        known.withLock { $0[folder]?.stamp = nil }
    }

    /// Every pack of `folder` with its table (for `relay status`).
    static func all(packs folder: String) -> [(name: String, locations: [String: Location])] {
        ((try? Syscall.listDirectory(folder).get()) ?? []).filter { $0.hasSuffix(".pack") }.sorted().compactMap { name in
            readTable(folder + "/" + name).map { (name, $0) }
        }
    }

    /// The bytes at `location`, checked against `hash`.
    static func load(_ location: Location, hash: ContentHash) throws -> [UInt8] {
        let fd = try Syscall.open(location.pack, O_RDONLY).orThrow("open pack", path: location.pack)
        defer { Syscall.close(fd) }
        let bytes = try Syscall.pread(fd, count: location.length, offset: location.offset).orThrow("read pack", path: location.pack)
        guard bytes.count == location.length, ContentHash(of: bytes) == hash else {
            throw WorkspaceError(.io, "stored version \(hash.short) in \(location.pack) is damaged", path: location.pack)
        }
        return bytes
    }
}
