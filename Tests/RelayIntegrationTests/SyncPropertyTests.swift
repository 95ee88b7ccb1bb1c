import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

// The issue's randomized proof of sync: three replicas, random creates, edits (appends and
// rewrites of context.md and notes, journals, chat transcripts, binaries), deletes, and syncs
// between random pairs, some of them crashed part-way through their apply (and resumed), then
// rounds of full syncs. A causal model of every write and delete (which events each replica's
// copy of a path already includes) gives each property its exact meaning:
//
// 1. convergence — the trees are byte-identical outside .relay/ and one more round moves nothing;
// 2. preservation — every write no later event causally overwrote survives: a binary as the live
//    file or a conflict copy, text, journals and transcripts as every line or message it added
//    (unless a later event that saw it took it out);
// 3. a path is gone only if every event nothing causally follows is a delete (and then it is gone);
// 4. no torn file — every file, after every crash too, is made of whole versions: lines, messages
//    or bytes somebody wrote to that path;
// 5. no spurious conflicts — a path whose concurrent events are only identical writes, deletes
//    against writes, or pure appends to a journal or transcript has no conflict copy.
//
// `make test` runs a few hundred operations per seed; `make soak` thousands
// (RELAY_SOAK_OPS=5000 RELAY_SOAK_SEEDS=1,2,3 swift test --filter SyncPropertyTests).

/// What a path's content is made of, for the model.
enum ModelKind {
    case text, journal, transcript, binary

    init(_ path: String) {
        switch MergeKind.of(path) {
        case .text: self = .text
        case .journal: self = .journal
        case .transcript: self = .transcript
        // The one JSON file the run writes (a roster of one agent whose name changes) merges by
        // key, and two different names of one agent are a conflict: whole versions, as a binary's.
        case .binary, .json: self = .binary
        }
    }

    /// The units a version is made of: lines, messages ("id|text"), or the whole content.
    func units(_ bytes: [UInt8]) -> Set<String>? {
        switch self {
        case .text, .journal:
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            return Set(text.split(separator: "\n").map(String.init))
        case .transcript:
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                  let messages = object["messages"] as? [[String: Any]] else { return nil }
            var units = Set<String>()
            for message in messages {
                guard let id = message["id"] as? String, let text = message["text"] as? String else { return nil }
                units.insert(id + "|" + text)
            }
            return units
        case .binary:
            return [ContentHash(of: bytes).hex]
        }
    }
}

/// One write or delete of one path on one replica.
struct SyncModelEvent {
    var id: Int
    var path: String
    var replica: Int
    var step: Int
    /// nil: a delete.
    var content: [UInt8]?
    var added: Set<String>
    var removed: Set<String>
    /// The events the replica's copy of the path already included when this one happened.
    var past: Set<Int>
    /// Only added to the end of a journal, or only added messages to a transcript.
    var pureAppend: Bool
    var isDelete: Bool { content == nil }
}

/// A sync endpoint that dies after a set number of calls, like a process killed with SIGKILL in
/// the middle of an apply: from then on every call fails, nothing is flushed, and what the
/// endpoint had not committed is dropped with it (SQLite rolls back the open transaction; the
/// write batch removes its temporaries and releases its locks).
final class CrashingEndpoint: ReplicaEndpoint {
    struct SimulatedCrash: Error {}

    /// Shared by both sides of one sync: the process dies once for both. Both sides refresh,
    /// and flush, at once (on two threads).
    final class Fuse: Sendable {
        private let state: LockedBox<(remaining: Int, blown: Bool)>
        init(calls: Int) { state = LockedBox((calls, false)) }
        /// Calls left before the crash.
        var left: Int { state.value.remaining }
        func tick() throws {
            try state.mutate { state in
                if state.blown { throw SimulatedCrash() }
                state.remaining -= 1
                if state.remaining < 0 { state.blown = true; throw SimulatedCrash() }
            }
        }
    }

    let inner: ReplicaEndpoint
    let fuse: Fuse
    init(_ inner: ReplicaEndpoint, fuse: Fuse) { self.inner = inner; self.fuse = fuse }

    /// The paths the sync said it would write here (`expectWrites`), and those it then staged
    /// without having said so: the plan the endpoint reads ahead by must cover every write.
    private(set) var announced: Set<String> = []
    private(set) var unannounced: [String] = []
    func expectWrites(_ paths: [String], contents: [String]) {
        announced.formUnion(paths)
        inner.expectWrites(paths, contents: contents)
    }

    var replica: String { inner.replica }
    var location: String { inner.location }
    func refresh() throws -> [String: SyncIndex.Entry] { try fuse.tick(); return try inner.refresh() }
    func refreshMap() throws -> EntryMap { try fuse.tick(); return try inner.refreshMap() }
    var remote: RemoteEndpoint? { inner.remote }
    var syncIndex: SyncIndex? { inner.syncIndex }
    func read(_ path: String, expected: String) throws -> [UInt8] { try fuse.tick(); return try inner.read(path, expected: expected) }
    func install(_ path: String, bytes: [UInt8], expected: String?, overwrite: Bool, vector: VersionVector) throws -> SyncIndex.Entry {
        try fuse.tick(); return try inner.install(path, bytes: bytes, expected: expected, overwrite: overwrite, vector: vector)
    }
    func remove(_ path: String, expected: String, vector: VersionVector) throws -> SyncIndex.Entry {
        try fuse.tick(); return try inner.remove(path, expected: expected, vector: vector)
    }
    func record(_ entry: SyncIndex.Entry) throws { try fuse.tick(); try inner.record(entry) }
    func base(peer: String, path: String) throws -> String? { try fuse.tick(); return try inner.base(peer: peer, path: path) }
    func setBase(peer: String, path: String, hash: String, vector: VersionVector, content: [UInt8]?) throws {
        try fuse.tick(); try inner.setBase(peer: peer, path: path, hash: hash, vector: vector, content: content)
    }
    func mergeBases(path: String) throws -> [MergeBase] { try fuse.tick(); return try inner.mergeBases(path: path) }
    func heldVersions(path: String) throws -> [HeldVersion] { try fuse.tick(); return try inner.heldVersions(path: path) }
    func loadObject(_ hash: String) throws -> [UInt8]? { try fuse.tick(); return try inner.loadObject(hash) }
    func recordConflict(path: String, copy: String, kept: String, copied: String) throws {
        try fuse.tick(); try inner.recordConflict(path: path, copy: copy, kept: kept, copied: copied)
    }
    func stage(_ path: String, bytes: [UInt8], hash: String?, expected: String?, vector: VersionVector, basePeer: String?) throws {
        if !announced.contains(path) { unannounced.append(path) }
        try fuse.tick(); try inner.stage(path, bytes: bytes, hash: hash, expected: expected, vector: vector, basePeer: basePeer)
    }
    func stageRemoval(_ path: String, expected: String, vector: VersionVector) throws {
        if !announced.contains(path) { unannounced.append(path) }
        try fuse.tick(); try inner.stageRemoval(path, expected: expected, vector: vector)
    }
    func flush() throws -> [String: SyncIndex.Entry?] { try fuse.tick(); return try inner.flush() }
    func beginFlush() throws { try fuse.tick(); try inner.beginFlush() }
    var flushesInBackground: Bool { inner.flushesInBackground }
    func flushInBackground() throws -> [String: SyncIndex.Entry?] { try fuse.tick(); return try inner.flushInBackground() }
    func takeDeferredFailures() throws -> [(path: String, error: SyncError)] { try fuse.tick(); return try inner.takeDeferredFailures() }
    func finish() throws { try fuse.tick(); try inner.finish() }
    var indexTransfer: IndexTransfer? { inner.indexTransfer }
    func prefetch(_ wanted: [(path: String, expected: String, size: Int)]) { inner.prefetch(wanted) }
    var refreshedSequence: Int64? { inner.refreshedSequence }
    func syncMark(peer: String) throws -> SyncMark? { try fuse.tick(); return try inner.syncMark(peer: peer) }
    func setSyncMark(_ mark: SyncMark, peer: String) throws { try fuse.tick(); try inner.setSyncMark(mark, peer: peer) }
}

/// Three replicas, the model of their histories, and the property checks.
final class SyncModel {
    static let paths = ["context.md", "notes/plan.md", "Journal/user/2026-11-22.md", "Journal/agent/2026-11-22.md",
                        "Chats/general.json", "Chats/ideas.json", "data/blob.bin", "data/photo.png"]

    let seed: UInt64
    let base: String
    let replicas: [ScratchWorkspace]
    var random: SeededGenerator
    var events: [SyncModelEvent] = []
    /// Per replica, per path: the events its copy of the path includes.
    var known: [[String: Set<Int>]]
    /// Per path: every unit any version of it ever had (what a file of that path may be made of).
    var universe: [String: Set<String>] = [:]
    var crashes = 0
    var syncs = 0
    /// The most endpoint calls one sync has made.
    var longestSync = 0
    /// What happened, in order, for the report of a failing path.
    var log: [(path: String?, line: String)] = []
    var failures: [String] = []

    /// Whether a sync reaches its peer through the folder or over the sync protocol (a
    /// `SyncServer` on a thread, as `relay sync-serve` at the end of ssh).
    enum Transport { case folder, protocolOrFolder }
    let transport: Transport

    /// Every path a file may have: the random operations' and, with a template, its files.
    let allPaths: [String]

    /// With `template`, each replica is made by `relay init` with it (the built-in template):
    /// its files are one event every replica includes from the start.
    init(seed: UInt64, transport: Transport = .folder, template: WorkspaceTemplate? = nil) throws {
        self.seed = seed
        self.transport = transport
        let base = FileManager.default.temporaryDirectory.path + "/relay-sync-model-" + UUID().uuidString
        self.base = base
        replicas = try ["a", "b", "c"].map { try ScratchWorkspace(in: base, name: $0, template: template ?? WorkspaceTemplate(files: [])) }
        random = SeededGenerator(state: seed)
        known = Array(repeating: [:], count: 3)
        allPaths = Array(Set(Self.paths + (template?.files.map(\.path) ?? []))).sorted()
        for file in template?.files ?? [] {
            let units = ModelKind(file.path).units(file.bytes) ?? []
            let event = SyncModelEvent(id: events.count, path: file.path, replica: -1, step: -1, content: file.bytes, added: units,
                                   removed: [], past: [], pureAppend: false)
            events.append(event)
            for r in 0..<3 { known[r][file.path] = [event.id] }
            universe[file.path, default: []].formUnion(units)
            log.append((file.path, "#\(event.id) the template's, on every replica"))
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }

    func fail(_ message: String) { failures.append("seed \(seed): \(message)") }

    /// The events of `path` and the syncs that touched it, for a failure's report.
    func history(of path: String) -> String {
        log.filter { $0.path == path || ($0.path == nil && $0.line.contains(path.split(separator: "/").last!.split(separator: ".").first!)) }
            .map(\.line).joined(separator: "\n")
    }

    func bytes(_ replica: Int, _ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: replicas[replica].root + "/" + path).map { Array($0) }
    }

    // MARK: Operations

    func step(_ step: Int) throws {
        let r = Int.random(in: 0..<3, using: &random)
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<12: try write(r, Self.paths.randomElement(using: &random)!, step: step)
        case 12: delete(r, Self.paths.randomElement(using: &random)!, step: step)
        default:
            let other = (r + Int.random(in: 1...2, using: &random)) % 3
            // A third of the syncs die somewhere among the calls a sync makes (its longest so far).
            let crash = Int.random(in: 0..<3, using: &random) == 0
            try sync(r, other, crashAfter: crash ? Int.random(in: 0..<max(longestSync, 1), using: &random) : nil)
        }
    }

    func write(_ r: Int, _ path: String, step: Int) throws {
        let kind = ModelKind(path)
        let old = bytes(r, path)
        let tag = "u\(step)r\(r)"
        var pureAppend = false
        let new: [UInt8]
        switch kind {
        case .text:
            var lines = old.map { String(decoding: $0, as: UTF8.self).split(separator: "\n").map { String($0) + "\n" } } ?? []
            let choice = lines.isEmpty ? 0 : Int.random(in: 0..<4, using: &random)
            let position = Int.random(in: 0...lines.count, using: &random)
            switch choice {
            case 0: lines.append("- \(tag) appended\n")
            case 1: lines.insert("- \(tag) inserted\n", at: position)
            case 2: lines[min(position, lines.count - 1)] = "- \(tag) rewritten\n"
            default: if lines.count > 1 { lines.remove(at: min(position, lines.count - 1)) } else { lines.append("- \(tag) appended\n") }
            }
            new = Array(lines.joined().utf8)
        case .journal:
            var text = old.map { String(decoding: $0, as: UTF8.self) } ?? ""
            if !text.isEmpty && Int.random(in: 0..<8, using: &random) == 0 {
                var lines = text.split(separator: "\n").map { String($0) + "\n" }
                lines[Int.random(in: 0..<lines.count, using: &random)] = "- \(tag) corrected\n"
                text = lines.joined()
            } else {
                text += "- 12:\(String(format: "%05d", step)) \(tag) entry\n"
                pureAppend = true
            }
            new = Array(text.utf8)
        case .transcript:
            var object = old.flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] } ?? ["title": path]
            var messages = object["messages"] as? [[String: Any]] ?? []
            if !messages.isEmpty && Int.random(in: 0..<8, using: &random) == 0 {
                let index = Int.random(in: 0..<messages.count, using: &random)
                messages[index]["text"] = "edited \(tag)"
            } else {
                messages.append(["id": "m-\(tag)", "time": String(format: "2026-11-22T12:%08d", step), "role": "user", "text": "said \(tag)"])
                pureAppend = true
            }
            object["messages"] = messages
            new = Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        case .binary:
            var blob = Array("BIN \(tag) ".utf8)
            for _ in 0..<Int.random(in: 16..<2048, using: &random) { blob.append(UInt8.random(in: 0...255, using: &random)) }
            new = blob
        }
        let url = URL(fileURLWithPath: replicas[r].root + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(new).write(to: url)
        let oldUnits = old.flatMap { kind.units($0) } ?? []
        let newUnits = kind.units(new)!
        record(r, path, step: step, content: new, added: newUnits.subtracting(oldUnits), removed: oldUnits.subtracting(newUnits),
               pureAppend: pureAppend || (old == nil && kind != .binary))
        universe[path, default: []].formUnion(newUnits)
    }

    /// Before the replicas first meet (made apart, each by `relay init` with `template`): each
    /// edits the template's text files only inside a region of its own — a third of the
    /// template's lines, two untouched lines between regions — by inserting, rewriting and
    /// deleting lines, and one of them rewrites the roster (which does not merge). No two edits
    /// overlap, so their first meeting must make no conflict copy.
    func editTemplateFilesApart(_ template: WorkspaceTemplate, step: inout Int) throws {
        for file in template.files where ModelKind(file.path) == .text {
            let templateLines = LineDiff.lines(String(decoding: file.bytes, as: UTF8.self)[...]).count
            guard templateLines >= 13 else { continue }
            let size = (templateLines - 4) / 3
            for r in 0..<3 where Int.random(in: 0..<4, using: &random) > 0 {
                let start = r * (size + 2)
                var length = size
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let old = bytes(r, file.path) ?? []
                    var lines = LineDiff.lines(String(decoding: old, as: UTF8.self)[...]).map(String.init)
                    let tag = "t\(step)r\(r)"
                    // Blank lines are left alone: a diff may align one with another blank line
                    // outside the region.
                    let written = (start..<(start + length)).filter { !lines[$0].trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
                    switch Int.random(in: 0..<3, using: &random) {
                    case 1 where !written.isEmpty:
                        lines[written.randomElement(using: &random)!] = "- \(tag) rewritten\n"
                    case 2 where written.count > 1:
                        lines.remove(at: written.randomElement(using: &random)!)
                        length -= 1
                    default:
                        lines.insert("- \(tag) inserted\n", at: start + Int.random(in: 0...length, using: &random))
                        length += 1
                    }
                    try writeFile(r, file.path, Array(lines.joined().utf8), old: old, step: step, pureAppend: false)
                    step += 1
                }
            }
        }
        // A file that does not merge, changed on one side only: the other side is behind.
        if template.files.contains(where: { $0.path == "AgentConfiguration.json" }) {
            let r = Int.random(in: 0..<3, using: &random)
            let roster = Array("[{\"id\": \"planner\", \"name\": \"Paige \(step)\"}]\n".utf8)
            try writeFile(r, "AgentConfiguration.json", roster, old: bytes(r, "AgentConfiguration.json"), step: step, pureAppend: false)
            step += 1
        }
    }

    /// Writes `new` at `path` on replica `r` and records the event.
    private func writeFile(_ r: Int, _ path: String, _ new: [UInt8], old: [UInt8]?, step: Int, pureAppend: Bool) throws {
        let kind = ModelKind(path)
        try Data(new).write(to: URL(fileURLWithPath: replicas[r].root + "/" + path))
        let oldUnits = old.flatMap { kind.units($0) } ?? []
        let newUnits = kind.units(new)!
        record(r, path, step: step, content: new, added: newUnits.subtracting(oldUnits), removed: oldUnits.subtracting(newUnits),
               pureAppend: pureAppend)
        universe[path, default: []].formUnion(newUnits)
    }

    func delete(_ r: Int, _ path: String, step: Int) {
        guard let old = bytes(r, path) else { return }
        unlink(replicas[r].root + "/" + path)
        record(r, path, step: step, content: nil, added: [], removed: ModelKind(path).units(old) ?? [], pureAppend: false)
    }

    func record(_ r: Int, _ path: String, step: Int, content: [UInt8]?, added: Set<String>, removed: Set<String>, pureAppend: Bool) {
        let event = SyncModelEvent(id: events.count, path: path, replica: r, step: step, content: content, added: added,
                               removed: removed, past: known[r][path] ?? [], pureAppend: pureAppend)
        events.append(event)
        known[r][path, default: []].insert(event.id)
        log.append((path, "#\(event.id) step \(step) replica \(r): \(content == nil ? "delete" : pureAppend ? "append" : "write") past \(event.past.sorted())"))
    }

    /// Syncs two replicas; with `crashAfter`, the sync dies after that many endpoint calls, the
    /// files are checked for torn content, and the sync is run again to completion (resumed).
    @discardableResult
    func sync(_ r1: Int, _ r2: Int, crashAfter: Int? = nil, examineAll: Bool = false) throws -> SyncSummary {
        syncs += 1
        var options = Reconciler.Options()
        options.force = true
        options.examineAll = examineAll
        // Mostly batches of a few files, so that between folders one commits in the background
        // while the next is staged (and a crash can fall between the two). Not drawn from
        // `random`: the seeds' histories stay what they were.
        options.batchFiles = [1, 2, 3, 1_000][syncs % 4]
        let overProtocol = transport == .protocolOrFolder && Bool.random(using: &random)
        /// The peer's endpoint, and how to let go of it (over the protocol: the client goes away,
        /// and the server commits what it was sent, as `relay sync-serve` does on a lost connection).
        func peer() throws -> (ReplicaEndpoint, () -> Void) {
            guard overProtocol else { return (try LocalEndpoint(workspace: replicas[r2].workspace), {}) }
            let served = try ServedReplica(replicas[r2])
            return (served.endpoint, served.close)
        }
        if let crashAfter {
            let fuse = CrashingEndpoint.Fuse(calls: crashAfter)
            var close: () -> Void = {}
            var crashed = false
            do {
                // Both endpoints live only in this block: a crash drops them (and what they had
                // not committed) before anything is checked.
                let (inner, closer) = try peer()
                close = closer
                let a = CrashingEndpoint(try LocalEndpoint(workspace: replicas[r1].workspace), fuse: fuse)
                let b = CrashingEndpoint(inner, fuse: fuse)
                _ = try Reconciler(local: a, peer: b, options: options).run()
            } catch is CrashingEndpoint.SimulatedCrash {
                crashed = true
            }
            close()
            if crashed {
                crashes += 1
                checkNothingTorn(r1, when: "after a crash")
                checkNothingTorn(r2, when: "after a crash")
            }
        }
        let counter = CrashingEndpoint.Fuse(calls: .max)
        let (inner, close) = try peer()
        defer { close() }
        let here = CrashingEndpoint(try LocalEndpoint(workspace: replicas[r1].workspace), fuse: counter)
        let there = CrashingEndpoint(inner, fuse: counter)
        let summary = try Reconciler(local: here, peer: there, options: options).run()
        longestSync = max(longestSync, Int.max - counter.left)
        for (endpoint, name) in [(here, r1), (there, r2)] where !endpoint.unannounced.isEmpty {
            fail("sync \(r1)–\(r2) wrote on replica \(name) paths it had not announced (expectWrites): \(endpoint.unannounced.prefix(5))")
        }
        // A sync leaves its two replicas the same, though it looked only at the paths written
        // since their last clean sync: a dry run that looks at every path finds nothing to do.
        if !examineAll && summary.skipped.isEmpty && summary.clashes.isEmpty {
            var check = options
            check.examineAll = true
            check.dryRun = true
            let (inner, close) = try peer()
            defer { close() }
            let leftover = try Reconciler(local: try LocalEndpoint(workspace: replicas[r1].workspace), peer: inner, options: check).run()
            if !leftover.actions.isEmpty {
                fail("sync \(r1)–\(r2) looked at \(summary.examined) paths and left work a look at every path finds: \(leftover.actions.prefix(5))")
            }
        }
        log.append((nil, "sync \(r1)–\(r2)\(overProtocol ? " over the protocol" : "")\(crashAfter.map { " (crashed after \($0) calls, resumed)" } ?? ""): \(summary.actions.joined(separator: "; "))"))
        for path in Set(known[r1].keys).union(known[r2].keys) {
            let union = (known[r1][path] ?? []).union(known[r2][path] ?? [])
            known[r1][path] = union
            known[r2][path] = union
        }
        return summary
    }

    /// Full rounds until one moves nothing; false if that never happens.
    func converge() throws -> Bool {
        for _ in 0..<8 {
            let moved = try [(0, 1), (1, 2), (0, 2)].map { try sync($0.0, $0.1).transferred }.reduce(0, +)
            if moved == 0 { return true }
        }
        return false
    }

    // MARK: Properties

    func checkNothingTorn(_ r: Int, when: String) {
        for (path, data) in replicas[r].tree() {
            let original = ConflictNames.original(of: path) ?? path
            guard allPaths.contains(original) else { fail("\(when): unexpected file \(path) on replica \(r)"); continue }
            guard let units = ModelKind(original).units(Array(data)) else {
                fail("\(when): \(path) on replica \(r) is not a whole version (does not parse)")
                continue
            }
            let strange = units.subtracting(universe[original] ?? [])
            if !strange.isEmpty { fail("\(when): \(path) on replica \(r) holds what nobody wrote: \(strange.sorted().prefix(3))") }
        }
    }

    func checkProperties() throws {
        guard try converge() else { fail("no convergence after 8 rounds of full syncs"); return }
        // Syncs after a clean one look only at paths written since (`SyncMark`): a round that
        // looks at every path finds nothing they passed over.
        for (r1, r2) in [(0, 1), (1, 2), (0, 2)] {
            let summary = try sync(r1, r2, examineAll: true)
            if !summary.actions.isEmpty { fail("a sync of \(r1)–\(r2) looking at every path still had work: \(summary.actions.prefix(5))") }
        }
        let indexes = try (0..<3).map { try SyncIndex(workspace: replicas[$0].workspace).entries() }
        // The digest a server answers with is the sum `put` kept through every write, crash
        // and restamp: it must be the digest of the rows.
        for r in 0..<3 {
            let kept = try SyncIndex(workspace: replicas[r].workspace).storedDigest()
            if kept != SyncIndex.digest(indexes[r]) { fail("replica \(r)'s kept digest \(kept) is not its rows' \(SyncIndex.digest(indexes[r]))") }
        }
        for r in 1..<3 {
            for (path, entry) in indexes[0] where !SyncIndex.isExcluded(path) {
                guard let other = indexes[r][path] else { continue }
                if other.hash != entry.hash || other.vector != entry.vector || other.deleted != entry.deleted {
                    fail("after convergence \(path) is \(entry.vector) \(entry.deleted ? "deleted" : entry.hash.prefix(8)) on replica 0 but \(other.vector) \(other.deleted ? "deleted" : other.hash.prefix(8)) on replica \(r)")
                }
            }
        }
        let tree = replicas[0].tree()
        for r in 1..<3 where replicas[r].tree() != tree {
            let other = replicas[r].tree()
            let differing = Set(tree.keys).union(other.keys).filter { tree[$0] != other[$0] }.sorted()
            fail("replicas 0 and \(r) differ after convergence: \(differing.prefix(5))")
        }
        // After full rounds every replica knows every event.
        for r in 0..<3 { checkNothingTorn(r, when: "at the end") }

        for path in allPaths {
            let history = events.filter { $0.path == path }
            guard !history.isEmpty else { continue }
            let kind = ModelKind(path)
            let superseded = history.reduce(into: Set<Int>()) { $0.formUnion($1.past) }
            let latest = history.filter { !superseded.contains($0.id) }
            let live = tree[path]
            let copies = tree.filter { ConflictNames.original(of: $0.key) == path }
            let describe = { (e: SyncModelEvent) in "\(e.isDelete ? "delete" : "write") #\(e.id) (step \(e.step), replica \(e.replica))" }

            // (3) Gone only if every latest event is a delete; and then gone.
            let allDeletes = latest.allSatisfy(\.isDelete)
            if live == nil && !allDeletes {
                fail("\(path) is gone, but \(latest.filter { !$0.isDelete }.map(describe)) no delete followed")
            }
            if live != nil && allDeletes { fail("\(path) is back, though every latest event deletes it: \(latest.map(describe))") }

            // (2) Preservation.
            let present = ([live].compactMap { $0 } + Array(copies.values)).reduce(into: Set<String>()) {
                $0.formUnion(kind.units(Array($1)) ?? [])
            }
            if kind == .binary {
                for event in latest where !event.isDelete && !present.contains(ContentHash(of: event.content!).hex) {
                    fail("\(path): \(describe(event)) is lost — neither the file nor a conflict copy holds it")
                }
            } else {
                let removed = history.reduce(into: Set<String>()) { $0.formUnion($1.removed) }
                for event in history {
                    let lost = event.added.subtracting(removed).subtracting(present)
                    if !lost.isEmpty { fail("\(path): \(describe(event)) lost \(lost.sorted().prefix(3)) though nothing that saw it took it out") }
                }
            }

            // (5) No spurious conflicts.
            var concurrent: [(SyncModelEvent, SyncModelEvent)] = []
            for (i, e1) in history.enumerated() {
                for e2 in history[(i + 1)...] where !e2.past.contains(e1.id) && !e1.past.contains(e2.id) { concurrent.append((e1, e2)) }
            }
            let expectClean = concurrent.allSatisfy { e1, e2 in
                e1.isDelete || e2.isDelete || e1.content == e2.content
                    || (e1.pureAppend && e2.pureAppend && (kind == .transcript || kind == .journal))
            }
            if expectClean && !copies.isEmpty {
                fail("\(path): \(copies.count) conflict copies, but its history has no real conflict (\(copies.keys.sorted()))")
            }
            if failures.contains(where: { $0.contains(path) }) && ProcessInfo.processInfo.environment["RELAY_SOAK_TRACE"] != nil {
                print("history of \(path):\n" + self.history(of: path))
            }
        }
    }
}

@Suite("Sync properties on three random replicas", .serialized)
struct SyncPropertyTests {
    static var operations: Int { Int(ProcessInfo.processInfo.environment["RELAY_SOAK_OPS"] ?? "") ?? 300 }
    static var seeds: [UInt64] {
        if let list = ProcessInfo.processInfo.environment["RELAY_SOAK_SEEDS"] {
            return list.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        }
        return [11, 29, 47]
    }

    @Test(arguments: seeds)
    func randomHistoriesOnThreeReplicasKeepEveryPropertyThroughCrashedSyncs(seed: UInt64) throws {
        try run(SyncModel(seed: seed), "")
    }

    /// Half the syncs go over the protocol, so the client's copy of each peer's index (rows
    /// changed since the last sequence seen) meets folder syncs, crashes and resumes.
    @Test(arguments: seeds.prefix(2))
    func theSamePropertiesHoldWhenHalfTheSyncsGoOverTheProtocol(seed: UInt64) throws {
        try run(SyncModel(seed: seed, transport: .protocolOrFolder), " over the protocol or a folder")
    }

    /// Replicas made apart by `relay init` (the built-in template), each of which edited the
    /// template's files before they first met, in places that do not overlap: the first
    /// meeting converges with no conflict copy and every edit in place; then the random
    /// histories go on, half their syncs over the protocol, and every property holds.
    @Test(arguments: seeds.prefix(2))
    func independentlyInitialisedReplicasThatEditedTemplateFilesBeforeFirstMeetingConvergeWithoutConflictCopies(seed: UInt64) throws {
        let template = WorkspaceTemplate.embedded
        let model = try SyncModel(seed: seed, transport: .protocolOrFolder, template: template)
        var step = 0
        try model.editTemplateFilesApart(template, step: &step)
        let edits = model.events.filter { $0.replica >= 0 }.count
        #expect(edits > 0, "seed \(seed): nothing was edited before the first meeting")
        #expect(try model.converge(), "seed \(seed): the first meeting did not converge")
        let tree = model.replicas[0].tree()
        let copies = tree.keys.filter { ConflictNames.original(of: $0) != nil }.sorted()
        #expect(copies.isEmpty, "seed \(seed): the first meeting made conflict copies of edits that do not overlap: \(copies)")
        for r in 1..<3 { #expect(model.replicas[r].tree() == tree, "seed \(seed): replica \(r) differs after the first meeting") }
        // Every line an edit added and no later edit took out is in the file.
        for event in model.events where event.replica >= 0 {
            let removed = model.events.filter { $0.path == event.path }.reduce(into: Set<String>()) { $0.formUnion($1.removed) }
            let present = tree[event.path].flatMap { ModelKind(event.path).units(Array($0)) } ?? []
            let lost = event.added.subtracting(removed).subtracting(present)
            #expect(lost.isEmpty, "seed \(seed): \(event.path) lost \(lost.sorted().prefix(3)) at the first meeting")
        }
        try run(model, " after a first meeting of replicas made apart", firstStep: step)
    }

    func run(_ model: SyncModel, _ how: String, firstStep: Int = 0) throws {
        let seed = model.seed
        print("sync property run\(how): seed \(seed), \(Self.operations) operations (replay with RELAY_SOAK_SEEDS=\(seed))")
        for step in firstStep..<(firstStep + Self.operations) {
            try model.step(step)
            if model.failures.count > 0 { break }
        }
        if model.failures.isEmpty { try model.checkProperties() }
        print("sync property run\(how): seed \(seed): \(model.events.count) writes and deletes, \(model.syncs) syncs, \(model.crashes) crashed mid-apply")
        #expect(model.crashes > 0 || Self.operations < 100, "seed \(seed): no sync was crashed; the test proves less than it says")
        for failure in model.failures.prefix(10) { Issue.record(Comment(rawValue: failure)) }
    }
}
