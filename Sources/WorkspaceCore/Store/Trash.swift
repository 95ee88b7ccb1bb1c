import Foundation
import Glibc
import Synchronization
import SystemPackage

/// Files Relay no longer needs — a displaced version the store already holds, a deleted file
/// whose content the store has kept — moved into `.relay/trash/` instead of unlinked where a
/// writer waits, and unlinked later in the background (`Housekeeping`, at the lowest priority).
///
/// Unlinking a file whose blocks are on disk frees them at once, and on a file system mounted
/// with `discard` (this machine's root is) the kernel waits for the device to trim them: about
/// 60 µs a file here, 9 ms for a change set's 150 displaced versions, on the receiving side's
/// critical path. A rename into the trash costs about 5 µs. A crash leaves the trash full; the
/// next sweep in any process empties it (everything in it is garbage by construction).
enum Trash {
    /// Folders with something discarded and not swept yet, and folders being swept.
    private static let state = Mutex<(dirty: Set<String>, sweeping: Set<String>, seen: Set<String>)>(([], [], []))
    /// Files moved into a trash by this process (for tests).
    static let moved = Mutex(0)

    /// Moves `file` into `folder` (made if missing) under a fresh name; unlinks it where that
    /// is not possible (another file system). The file is gone from its path either way. A
    /// folder put at the path meanwhile is not taken: it is moved back and `.isDirectory`
    /// returned, as `unlink` would have refused it.
    static func discard(_ file: String, into folder: String) -> Result<Void, Errno> {
        let name = folder + "/" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        var result = Syscall.rename(file, name)
        if case .failure(.noSuchFileOrDirectory) = result, case .success = Syscall.lstat(file) {
            _ = Syscall.mkdir(folder)
            result = Syscall.rename(file, name)
        }
        switch result {
        case .success:
            if case .success(let info) = Syscall.lstat(name), info.st_mode & S_IFMT == S_IFDIR {
                _ = Syscall.renameNoReplace(name, file)
                return .failure(.isDirectory)
            }
            state.withLock { _ = $0.dirty.insert(folder) }
            moved.withLock { $0 += 1 }
            return .success(())
        case .failure(.noSuchFileOrDirectory):
            return result
        case .failure:
            return Syscall.unlink(file)
        }
    }

    /// Empties `folder` in the background if anything was discarded into it (or, the
    /// first time this process asks, in case an earlier one left something).
    static func emptyLater(_ folder: String) {
        let start = state.withLock { state -> Bool in
            let first = state.seen.insert(folder).inserted
            guard (first || state.dirty.contains(folder)), !state.sweeping.contains(folder) else { return false }
            state.dirty.remove(folder)
            state.sweeping.insert(folder)
            return true
        }
        guard start else { return }
        Housekeeping.run {
            empty(folder)
            let again = state.withLock { state -> Bool in
                state.sweeping.remove(folder)
                return state.dirty.contains(folder)
            }
            if again { emptyLater(folder) }
        }
    }

    /// Unlinks everything in `folder` now.
    static func empty(_ folder: String) {
        guard case .success(let names) = Syscall.listDirectory(folder) else { return }
        for name in names { _ = Syscall.unlink(folder + "/" + name) }
    }
}
