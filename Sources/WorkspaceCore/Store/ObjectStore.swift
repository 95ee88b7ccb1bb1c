import Glibc

/// The content-addressed store of past versions, `.relay/objects/<sha256>`. Every version the
/// engine displaces when it replaces a file lands here, so an overwritten version can always
/// be recovered. Objects are immutable and named by their hash; `load` checks the hash.
public struct ObjectStore: Sendable {
    public let folder: String
    /// Where a copy the store already has goes (`Trash`).
    let trash: String
    var durable: Bool

    public func path(of hash: ContentHash) -> String { folder + "/" + hash.hex }

    /// Where packs of many versions are (`ObjectPack`).
    var packs: String { folder + "/packs" }

    /// Whether the store holds `hash`, as a file of its own or in a pack.
    public func contains(_ hash: ContentHash) -> Bool {
        if case .success = Syscall.lstat(path(of: hash)) { return true }
        return ObjectPack.locate(hash, packs: packs) != nil
    }

    /// Stores a copy of `bytes`; storing the same content twice stores it once.
    @discardableResult
    public func store(_ bytes: [UInt8]) throws -> ContentHash {
        let hash = ContentHash(of: bytes)
        if contains(hash) { return hash }
        try ensureFolder()
        let temporary = folder + "/" + WorkspaceLayout.temporaryPrefix + "object-" + randomSuffix()
        try Syscall.createFile(temporary, bytes: bytes, mode: 0o444, sync: durable).orThrow("write", path: temporary)
        do {
            try Syscall.rename(temporary, path(of: hash)).orThrow("rename", path: temporary)
        } catch {
            _ = Syscall.unlink(temporary)
            throw error
        }
        if durable { try syncFolder(folder) }
        return hash
    }

    /// Writes `bytes` to a temporary file in the store, not flushed: `WriteBatch` flushes the
    /// file system once and then `place`s it.
    func writeTemporary(_ bytes: [UInt8]) throws -> String {
        try ensureFolder()
        let temporary = folder + "/" + WorkspaceLayout.temporaryPrefix + "object-" + randomSuffix()
        try Syscall.createFile(temporary, bytes: bytes, mode: 0o444, sync: false).orThrow("write", path: temporary)
        return temporary
    }

    /// Names a temporary from `writeTemporary` by its hash (the caller made its bytes durable).
    func place(_ temporary: String, hash: ContentHash) throws {
        if contains(hash) {
            _ = Trash.discard(temporary, into: trash)
            return
        }
        if case .failure(let errno) = Syscall.rename(temporary, path(of: hash)) {
            _ = Syscall.unlink(temporary)
            throw WorkspaceError.system(errno, "store version", path: temporary)
        }
    }

    /// Moves an existing file (a displaced version that already sits on this file system) into
    /// the store without copying its bytes. `hash` must be the hash of its content.
    func adopt(_ file: String, hash: ContentHash) throws {
        if contains(hash) {
            _ = Trash.discard(file, into: trash)
            return
        }
        try ensureFolder()
        switch Syscall.rename(file, path(of: hash)) {
        case .success:
            if durable { try syncFolder(folder) }
        case .failure(.improperLink):  // .relay/ on another file system: copy instead
            let snapshot = try FileSnapshot.read(file, displayPath: file)
            try store(snapshot?.bytes ?? [])
            _ = Syscall.unlink(file)
        case .failure(let errno):
            throw WorkspaceError.system(errno, "store version", path: file)
        }
    }

    /// A pack to write versions into (`WriteBatch`), as a temporary in the store's folder.
    func packWriter() throws -> ObjectPack.Writer {
        try ensureFolder()
        return try ObjectPack.Writer(in: folder)
    }

    /// Names a pack from `ObjectPack.Writer` (finished, and flushed by the caller) in `packs/`.
    func place(_ pack: ObjectPack.Writer) throws {
        switch Syscall.mkdir(packs) {
        case .success, .failure(.fileExists): break
        case .failure(let errno): throw WorkspaceError.system(errno, "create folder", path: packs)
        }
        // 64 random bits: a name no other pack has.
        let name = packs + "/pack-" + String(UInt64.random(in: 0...UInt64.max), radix: 16) + ".pack"
        if case .failure(let errno) = Syscall.rename(pack.temporary, name) {
            _ = Syscall.unlink(pack.temporary)
            throw WorkspaceError.system(errno, "store versions", path: pack.temporary)
        }
        ObjectPack.forget(packs: packs)
    }

    /// The bytes of a stored version, checked against their hash.
    public func load(_ hash: ContentHash) throws -> [UInt8] {
        let file = path(of: hash)
        guard let snapshot = try FileSnapshot.read(file, displayPath: file) else {
            if let location = ObjectPack.locate(hash, packs: packs) { return try ObjectPack.load(location, hash: hash) }
            throw WorkspaceError(.versionNotFound, "version \(hash.short) is not in the store (\(folder))", path: file)
        }
        guard snapshot.hash == hash else {
            throw WorkspaceError(
                .io, "stored version \(hash.short) is damaged: its content hashes to \(snapshot.hash.short)", path: file)
        }
        return snapshot.bytes
    }

    private func ensureFolder() throws {
        switch Syscall.mkdir(folder) {
        case .success, .failure(.fileExists): return
        case .failure(let errno): throw WorkspaceError.system(errno, "create folder", path: folder)
        }
    }
}

/// fsyncs a folder so that renames and creations inside it survive power loss.
func syncFolder(_ folder: String) throws {
    let fd = try Syscall.open(folder, O_RDONLY | O_DIRECTORY).orThrow("open folder", path: folder)
    defer { Syscall.close(fd) }
    try Syscall.fsync(fd).orThrow("fsync folder", path: folder)
}

/// 8 random hex digits for temporary names.
func randomSuffix() -> String {
    String(UInt64.random(in: 0..<(1 << 32)), radix: 16)
}
