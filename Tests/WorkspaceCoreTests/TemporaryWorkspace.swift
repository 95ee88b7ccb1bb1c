import Foundation
@testable import WorkspaceCore

/// A fresh workspace in a temporary folder, removed when the value is released. The parent
/// folder also holds an `outside/` folder, to prove nothing leaks out of the root.
final class TemporaryWorkspace {
    let base: String
    let workspace: Workspace
    var root: String { workspace.root }
    var outside: String { base + "/outside" }

    init(durable: Bool = false, template: WorkspaceTemplate = WorkspaceTemplate(files: [])) throws {
        base = FileManager.default.temporaryDirectory.path + "/relay-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true)
        try "secret\n".write(toFile: base + "/outside/secret.txt", atomically: false, encoding: .utf8)
        var (workspace, _) = try Workspace.initialize(at: base + "/ws", template: template)
        workspace.durable = durable
        workspace.lockTimeout = .seconds(20)
        self.workspace = workspace
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }

    func absolute(_ relative: String) -> String { root + "/" + relative }

    func contents(_ relative: String) -> String? {
        try? String(contentsOfFile: absolute(relative), encoding: .utf8)
    }

    func put(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: absolute(relative))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: false, encoding: .utf8)
    }

    /// Every file name under `folder` (absolute), recursively, hidden ones included.
    func allNames(under folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []
    }

    func temporaries() -> [String] {
        allNames(under: root).filter { ($0 as NSString).lastPathComponent.hasPrefix(WorkspaceLayout.temporaryPrefix) }
    }
}

extension WorkspaceError {
    /// Whether this is a sandbox refusal whose message contains `text`.
    func isRefusal(mentioning text: String) -> Bool { code == .pathRefused && message.contains(text) }
}

/// Runs `body` on `count` real threads at once (not the cooperative pool, which has one thread
/// per core) and rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let group = DispatchGroup()
    let failures = LockedBox<[Error]>([])
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            do { try body(index) } catch { failures.mutate { $0.append(error) } }
            group.leave()
        }
        thread.start()
    }
    group.wait()
    if let first = failures.value.first { throw first }
}

final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
