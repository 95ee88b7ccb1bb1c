import RelayJSON

extension Workspace {
    /// The bytes of a file, read consistently (re-read if it changes while being read).
    /// Any content reads: binary and invalid UTF-8 come back as they are.
    ///
    /// - throws: `.notFound`, `.isADirectory`, `.pathRefused`.
    public func read(_ path: String) throws -> [UInt8] {
        try readHashed(path).bytes
    }

    /// `read`, with the SHA-256 of exactly the bytes read (computed once, as they are read):
    /// for a caller that checks them against a hash it expects (a sync's copy).
    public func readHashed(_ path: String) throws -> (bytes: [UInt8], hash: ContentHash) {
        try readHashed(path, folders: nil)
    }

    /// `readHashed`, trusting the folders `folders` has seen (`resolve(_:folders:)`).
    package func readHashed(_ path: String, folders: ResolvedFolders?) throws -> (bytes: [UInt8], hash: ContentHash) {
        let target = try resolve(path, folders: folders)
        guard let snapshot = try FileSnapshot.read(target.absolute, displayPath: target.relative) else {
            throw WorkspaceError(.notFound, "\(target.relative): no such file", path: target.relative)
        }
        return (snapshot.bytes, snapshot.hash)
    }

    /// A text file's content.
    ///
    /// - throws: `.invalidInput` naming the file and the byte offset when it is not UTF-8.
    public func readString(_ path: String) throws -> String {
        let bytes = try read(path)
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        let offset = firstInvalidUTF8Offset(bytes) ?? 0
        throw WorkspaceError(.invalidInput, "\(path): not UTF-8 text (invalid byte at offset \(offset))", path: path)
    }

    /// The SHA-256 of a file's content.
    public func hash(_ path: String) throws -> ContentHash { ContentHash(of: try read(path)) }
}
