/// What replay found: each model request compared with the recorded one, each file with the
/// recorded version.
public struct ReplayReport: Sendable, Equatable {
    public struct Check: Sendable, Equatable {
        public var what: String
        public var matches: Bool
        public var detail: String
    }

    public var requests: [Check] = []
    public var files: [Check] = []
    /// Where the replayed files are.
    public var folder: String = ""

    public var matches: Bool { requests.allSatisfy(\.matches) && files.allSatisfy(\.matches) }
}
