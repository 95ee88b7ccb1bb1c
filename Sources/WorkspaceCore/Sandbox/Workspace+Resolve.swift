extension Workspace {
    /// Resolves a path given by a person, a script, a model's tool call or a peer.
    ///
    /// Relative paths only. `..` may not climb above the root; symbolic links are followed
    /// component by component and must stay inside the root; nothing may land in `.relay/`.
    /// Call it before every open: a link can change between two operations.
    ///
    /// For example:
    /// ```swift
    /// try workspace.resolve("Research/../context.md").relative   // "context.md"
    /// try workspace.resolve("/etc/passwd")   // throws: absolute paths are not allowed
    /// ```
    /// - throws: `WorkspaceError` `.pathRefused` with the rule in the message, or
    ///   `.notADirectory` when a component that must be a folder is a file.
    public func resolve(_ path: String) throws -> ResolvedPath {
        try resolve(path, folders: nil)
    }

    /// `resolve`, taking the folders `folders` has seen as real folders (not links) during this
    /// batch of work as still being so: a sync that stages 1,000 files in 50 folders looks at
    /// each folder once, not once per file in it (the folders' `lstat`s were a tenth of a first
    /// sync's time). The last component is always looked at. A folder replaced by a link
    /// while the batch runs is seen by the next batch (a new `ResolvedFolders`); the sync
    /// itself never makes links, and a person who swaps a folder for a link in that window
    /// could as well do it between any resolve and the open after it.
    package func resolve(_ path: String, folders: ResolvedFolders?) throws -> ResolvedPath {
        func refuse(_ rule: PathRule) -> WorkspaceError {
            WorkspaceError(.pathRefused, rule.message(for: path), path: path)
        }
        if path.isEmpty { throw refuse(.empty) }
        if path.utf8.contains(0) { throw refuse(.containsNUL) }
        if path.hasPrefix("/") { throw refuse(.absolute) }
        if let folders, let resolved = resolveInKnownFolder(path, folders: folders) { return resolved }

        // Components still to walk, last one first so popLast() yields them in order.
        var pending = Array(path.split(separator: "/", omittingEmptySubsequences: true).map(String.init).reversed())
        var resolved: [String] = []
        var onDisk = true
        var hops = 0

        while let component = pending.popLast() {
            if component == "." { continue }
            if component == ".." {
                if resolved.isEmpty { throw refuse(.parentEscape) }
                resolved.removeLast()
                continue
            }
            if resolved.isEmpty && component == WorkspaceLayout.stateFolderName { throw refuse(.engineState) }
            guard onDisk else { resolved.append(component); continue }

            let relativeCandidate = (resolved + [component]).joined(separator: "/")
            let isFolder = !pending.isEmpty
            if isFolder, let folders, folders.known.contains(relativeCandidate) {
                resolved.append(component)
                continue
            }
            let candidate = layout.absolute(relativeCandidate)
            switch Syscall.lstat(candidate) {
            case .failure(.noSuchFileOrDirectory):
                onDisk = false
                resolved.append(component)
            case .failure(.notDirectory):
                let parent = resolved.isEmpty ? "." : resolved.joined(separator: "/")
                throw WorkspaceError(
                    .notADirectory, "\(path): '\(parent)' is a file where a folder is expected", path: path,
                    underlying: .notDirectory)
            case .failure(let errno):
                throw WorkspaceError.system(errno, "stat", path: path)
            case .success(let info) where FileKind(info.st_mode) == .symlink:
                hops += 1
                if hops > PathRule.maximumSymlinkHops { throw refuse(.symlinkLoop) }
                let target = try Syscall.readlink(candidate).orThrow("readlink", path: path)
                let linkName = (resolved + [component]).joined(separator: "/")
                var targetComponents = target.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
                if target.hasPrefix("/") {
                    // An absolute link is fine only when it points back inside this root.
                    let rootComponents = root.split(separator: "/").map(String.init)
                    guard targetComponents.starts(with: rootComponents) else {
                        throw refuse(.symlinkEscape(link: linkName, target: target))
                    }
                    targetComponents.removeFirst(rootComponents.count)
                    resolved = []
                }
                // A relative target is relative to the link's folder, which `resolved` already is.
                // Walking it through the same loop applies the '..' and '.relay' rules to it too,
                // but a '..' above the root must name the link, not the caller's path.
                let depthBefore = resolved.count
                var escape = targetComponents.prefix { $0 == ".." || $0 == "." }.filter { $0 == ".." }.count
                escape = max(0, escape - depthBefore)
                if escape > 0 { throw refuse(.symlinkEscape(link: linkName, target: target)) }
                pending.append(contentsOf: targetComponents.reversed())
            case .success(let info):
                if isFolder, let folders, FileKind(info.st_mode) == .directory { folders.known.insert(relativeCandidate) }
                resolved.append(component)
            }
        }
        let relative = resolved.joined(separator: "/")
        if resolved.first == WorkspaceLayout.stateFolderName { throw refuse(.engineState) }
        if let last = resolved.last, WorkspaceLayout.isTemporaryName(last) { throw refuse(.temporaryFile) }
        return ResolvedPath(relative: relative, absolute: layout.absolute(relative), exists: onDisk)
    }
}

extension Workspace {
    /// `resolve` of a plain path (no `.`, `..` or empty component, not in `.relay/`, not a
    /// temporary's name) whose folder this batch already found to be a real one: only its last
    /// component is looked at, with no component list built (a first sync resolves every path
    /// it writes; the general walk was a twentieth of its copy loop). nil for anything else —
    /// a link, a path to look at whole — which the general walk resolves.
    private func resolveInKnownFolder(_ path: String, folders: ResolvedFolders) -> ResolvedPath? {
        let bytes = path.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), !bytes.starts(with: (WorkspaceLayout.stateFolderName + "/").utf8) else { return nil }
        let parent = String(path[..<slash])
        guard folders.known.contains(parent) else { return nil }
        // Every component plain: none empty, none "." or "..".
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            let length = bytes.distance(from: start, to: end)
            if length == 0 || (length <= 2 && bytes[start..<end].allSatisfy { $0 == UInt8(ascii: ".") }) { return nil }
            start = end == bytes.endIndex ? end : bytes.index(after: end)
        }
        let name = path[path.index(after: slash)...]
        if name.hasPrefix(WorkspaceLayout.temporaryPrefix) { return nil }
        let absolute = layout.absolute(path)
        switch Syscall.lstat(absolute) {
        case .failure(.noSuchFileOrDirectory):
            return ResolvedPath(relative: path, absolute: absolute, exists: false)
        case .success(let info) where FileKind(info.st_mode) != .symlink:
            return ResolvedPath(relative: path, absolute: absolute, exists: true)
        default:
            return nil
        }
    }
}

/// The folders one thread's batch of resolves found to be real folders (see
/// `Workspace.resolve(_:folders:)`). Not shared between threads; dropped with the batch.
package final class ResolvedFolders {
    var known: Set<String> = []

    package init() {}

    /// How many resolves a reader that has no batch of its own (`ReadAhead`) makes before it
    /// forgets the folders: about a write batch's worth.
    package static let resolvesPerLook = 1_000

    /// Forgets every folder: the next resolves look again.
    package func forget() { known.removeAll(keepingCapacity: true) }

    /// Notes `relative` as a real folder just made or checked by the caller.
    func note(_ relative: String) { known.insert(relative) }
}
