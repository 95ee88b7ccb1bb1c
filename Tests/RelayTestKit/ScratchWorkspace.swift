import Foundation
import WorkspaceCore

/// A workspace in a folder of its own under the temporary directory, removed when the value is
/// released. Beside the workspace, the folder holds `outside/secret.txt`, to prove nothing
/// leaks out of the root.
///
/// For example:
///
///     let scratch = try ScratchWorkspace()
///     try scratch.write("notes/a.md", "one\n")
///     #expect(scratch.contents("notes/a.md") == "one\n")
///
/// Replicas of one test share a folder the test owns: `ScratchWorkspace(in: base, name: "laptop")`.
public final class ScratchWorkspace: Sendable {
    /// The folder holding the workspace (and `outside/`).
    public let base: String
    /// The workspace folder's name under `base`.
    public let folder: String
    public let root: String
    public let workspace: Workspace
    private let ownsBase: Bool

    public var outside: String { base + "/outside" }

    /// A workspace made with `Workspace.initialize` from `template` (none by default), in a new
    /// temporary folder.
    ///
    /// - parameter lockTimeout: how long a writer waits for a lock; the workspace's default when nil.
    public convenience init(
        name: String = "ws", template: WorkspaceTemplate = WorkspaceTemplate(files: []), durable: Bool = false,
        lockTimeout: Duration? = nil
    ) throws {
        let base = Self.newBase()
        try self.init(base: base, name: name, ownsBase: true, template: template, durable: durable, lockTimeout: lockTimeout)
    }

    /// A workspace in `base`, a folder the caller made and removes (replicas side by side).
    public convenience init(in base: String, name: String, template: WorkspaceTemplate = WorkspaceTemplate(files: [])) throws {
        try self.init(base: base, name: name, ownsBase: false, template: template, durable: false, lockTimeout: nil)
    }

    /// A workspace made by `make`, given the workspace's path (the integration tests run the
    /// real `relay init` there), in a new temporary folder.
    public init(name: String = "ws", madeBy make: (String) throws -> Void) throws {
        base = Self.newBase()
        folder = name
        ownsBase = true
        try Self.makeBase(base)
        root = base + "/" + name
        try make(root)
        workspace = try Workspace.open(at: root)
    }

    private init(base: String, name: String, ownsBase: Bool, template: WorkspaceTemplate, durable: Bool, lockTimeout: Duration?) throws {
        self.base = base
        self.folder = name
        self.ownsBase = ownsBase
        if ownsBase { try Self.makeBase(base) }
        var (workspace, _) = try Workspace.initialize(at: base + "/" + name, template: template)
        workspace.durable = durable
        if let lockTimeout { workspace.lockTimeout = lockTimeout }
        self.workspace = workspace
        root = workspace.root
    }

    deinit { if ownsBase { try? FileManager.default.removeItem(atPath: base) } }

    private static func newBase() -> String { FileManager.default.temporaryDirectory.path + "/relay-test-" + UUID().uuidString }

    private static func makeBase(_ base: String) throws {
        try FileManager.default.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true)
        try "secret\n".write(toFile: base + "/outside/secret.txt", atomically: false, encoding: .utf8)
    }

    /// The absolute path of `relative`.
    public func path(_ relative: String) -> String { root + "/" + relative }

    /// The file's text, or nil when it is missing or not UTF-8.
    public func contents(_ relative: String) -> String? { try? String(contentsOfFile: path(relative), encoding: .utf8) }

    public func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: path(relative)) }

    /// Writes a file as a person's editor would, in place, making folders as needed.
    public func write(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: path(relative))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    /// Adds `text` to the end of the file (made if missing), rewriting it whole.
    public func append(_ relative: String, _ text: String) throws { try write(relative, (contents(relative) ?? "") + text) }

    public func delete(_ relative: String) { unlink(path(relative)) }

    /// Every file name under `folder` (absolute), recursively, hidden ones included.
    public func allNames(under folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []
    }

    /// Relay's temporary files anywhere under the root, `.relay/` included.
    public func allTemporaries() -> [String] {
        allNames(under: root).filter { ($0 as NSString).lastPathComponent.hasPrefix(WorkspaceLayout.temporaryPrefix) }
    }

    /// Relay's temporary files directly in `folder` (the root by default).
    public func temporaries(in folder: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? root : path(folder))) ?? [])
            .filter { $0.hasPrefix(WorkspaceLayout.temporaryPrefix) }
    }

    /// Every file outside `.relay/`, path → bytes.
    public func tree() -> [String: Data] { Self.tree(root) }

    /// Every file under `root` outside its `.relay/`, path → bytes.
    public static func tree(_ root: String) -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let path = enumerator?.nextObject() as? String {
            if path == ".relay" { enumerator?.skipDescendants(); continue }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder), !isFolder.boolValue {
                result[path] = FileManager.default.contents(atPath: root + "/" + path)
            }
        }
        return result
    }
}
