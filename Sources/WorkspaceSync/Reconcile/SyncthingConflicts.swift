import Foundation
import WorkspaceCore

/// Folds Syncthing's conflict copies back into their originals. Syncthing keeps the newer
/// version and saves the other as `name.sync-conflict-YYYYMMDD-HHMMSS-XXXXXXX.ext`; its
/// maintainers chose not to merge text. Relay merges each copy into its original with the same
/// per-kind merges as `relay sync` (base: the last version this replica's index saw), keeps the
/// copy's bytes in the object store, and removes the copy. A copy whose changes overlap the
/// original's is left where it is for a person.
public enum SyncthingConflicts {
    public struct Outcome: Sendable, Codable, Equatable {
        /// Copies merged into their originals and removed.
        public var merged: [String] = []
        /// Copies left because their changes overlap the original's (or the original is gone).
        public var left: [String] = []
        public init() {}
    }

    public static func resolve(in workspace: Workspace) throws -> Outcome {
        try SyncError.wrappingDatabase { try resolveWrapped(in: workspace) }
    }

    private static func resolveWrapped(in workspace: Workspace) throws -> Outcome {
        var workspace = workspace
        workspace.writesTrigger = false
        let index = try SyncIndex(workspace: workspace)
        var outcome = Outcome()
        for copy in try workspace.list(".", recursive: true).map(\.path) where ConflictNames.isSyncthingCopy(copy) {
            guard let original = ConflictNames.original(of: copy), workspace.stamp(ofFileAt: original) != nil else {
                outcome.left.append(copy)
                continue
            }
            let theirs = try workspace.read(copy)
            let ours = try workspace.read(original)
            let baseHash = try index.entry(original).flatMap { $0.deleted ? nil : ContentHash(hex: $0.hash) }
            let base = try baseHash.flatMap { workspace.objects.contains($0) ? try workspace.objects.load($0) : nil }
            let kind = index.mergeRules.kind(of: original)
            // The same per-kind merge a sync makes; whatever would need a conflict copy is left.
            var merged: [UInt8]?
            if ours == theirs {
                merged = ours
            } else {
                let (bytes, conflicted, _) = ContentMerge.merge(path: original, base: base, ours: ours, oursReplica: "a",
                                                             theirs: theirs, theirsReplica: "b", winner: .ours, kind: kind)
                if !conflicted { merged = bytes }
            }
            guard let merged else {
                outcome.left.append(copy)
                continue
            }
            let expected = ContentHash(of: ours)
            struct Changed: Error {}
            do {
                try workspace.update(original, operation: "syncthing-merge") { current in
                    guard let current, ContentHash(of: current) == expected else { throw Changed() }
                    return merged
                }
            } catch is Changed {
                outcome.left.append(copy)
                continue
            }
            // The copy's bytes stay recoverable; then it goes.
            try workspace.objects.store(theirs)
            try workspace.remove(copy, expected: ContentHash(of: theirs), operation: "syncthing-merge")
            outcome.merged.append(copy)
        }
        return outcome
    }
}
