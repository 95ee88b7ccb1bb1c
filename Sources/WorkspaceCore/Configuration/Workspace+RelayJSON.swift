import Synchronization

extension Workspace {
    /// The workspace's relay.json, parsed; nil when there is none.
    ///
    /// Each module reads its own part of relay.json (the relays, the triggers, the sync's merge
    /// rules and peers, the model); they all get the document from here, so a command parses
    /// the file once however many parts it reads. The parse is kept per workspace for the bytes
    /// it came from: the file is read again on every call (a small read), and a relay.json that
    /// changed — by hand, through sync, while `relay watch` runs — is parsed again.
    ///
    /// - throws: `WorkspaceError` `.invalidInput` naming relay.json, the line and the column
    ///   when it is not a JSON object; the read's own errors otherwise.
    public func relayJSON() throws -> ConfigurationObject? {
        let read: (bytes: [UInt8], hash: ContentHash)
        do { read = try readHashed(WorkspaceLayout.configurationFileName) } catch let error as WorkspaceError where error.code == .notFound {
            return nil
        }
        if let kept = Self.parsedConfigurations.withLock({ $0[root] }), kept.hash == read.hash { return kept.document }
        let document = try ConfigurationObject(parsing: read.bytes, file: WorkspaceLayout.configurationFileName)
        Self.parsedConfigurations.withLock { kept in
            kept[root] = (read.hash, document, (kept[root]?.parses ?? 0) + 1)
        }
        return document
    }

    /// `relayJSON()`, nil also when the file cannot be read (refused, unreadable): for the
    /// readers that fall back to their defaults then — the merge rules, the peers, the model.
    /// A relay.json that is not valid JSON is still an error.
    public func relayJSONIfReadable() throws -> ConfigurationObject? {
        do { return try relayJSON() } catch let error as WorkspaceError where error.code != .invalidInput {
            return nil
        }
    }

    /// How many times this process parsed the relay.json of the workspace at `root` (for tests).
    package static func relayJSONParses(root: String) -> Int {
        parsedConfigurations.withLock { $0[root]?.parses ?? 0 }
    }

    /// The last parse of each workspace's relay.json, with the hash of the bytes it came from.
    private static let parsedConfigurations = Mutex<[String: (hash: ContentHash, document: ConfigurationObject, parses: Int)]>([:])
}
