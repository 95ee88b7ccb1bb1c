import Foundation
import Glibc

/// `Workspace.fileStamps` that more than one thread can work on (`help`): folders wait in a
/// stack, each listed by whichever thread takes it, its files stamped (`lstat` relative to the
/// open folder) and its subfolders pushed for anyone to take.
///
/// A sync refresh walks the tree on one thread while another reads the index; the read usually
/// ends first, and that thread then helps walk the rest instead of waiting. On a 2-core machine
/// the walk of 10,000–100,000 files, the longer of the two, is a sync server's first wait.
///
/// Like the one-thread walk, `.relay/` and temporary files are skipped, symbolic links are not
/// followed, and a folder swapped for a link mid-walk is not entered (each is opened relative to
/// its open parent with `O_NOFOLLOW`). The stamps come in no particular order.
public final class StampWalk: @unchecked Sendable {
    /// An open folder, closed when the last folder waiting to be opened inside it is taken.
    private final class OpenFolder {
        let fd: CInt
        init(_ fd: CInt) { self.fd = fd }
        deinit { Syscall.close(fd) }
    }

    /// A folder to list: the root, or `name` inside an open parent.
    private struct Pending {
        var parent: OpenFolder?
        var name: String
        var relative: String
    }

    private let condition = NSCondition()
    private var pending: [Pending]
    private var busy = 0
    /// Threads in `help`: the result waits for each to hand in what it found.
    private var helpers = 0
    private var done = false
    private var stamps: [[(path: String, stamp: FileStamp)]] = []
    private var sawTemporary = false
    private var failure: Error?
    private let root: String

    public init(_ workspace: Workspace) {
        root = workspace.root
        pending = [Pending(parent: nil, name: "", relative: "")]
    }

    /// Takes part in the walk until nothing is left to take; returns once the whole walk is done.
    public func help() {
        condition.lock()
        helpers += 1
        condition.unlock()
        // What this thread finds is kept apart until it stops: one list per thread to join.
        var found: [(path: String, stamp: FileStamp)] = []
        var temporaries = false
        var failed: Error?
        while let folder = take(failed: &failed) {
            var subfolders: [Pending] = []
            do { try list(folder, into: &found, subfolders: &subfolders, temporaries: &temporaries) } catch { failed = error }
            condition.lock()
            pending += subfolders
            busy -= 1
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        stamps.append(found)
        if temporaries { sawTemporary = true }
        helpers -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// The stamps of every regular file, and whether a temporary file was passed, once the walk
    /// is done (`help` from this thread first, if it is the only one).
    public func result() throws -> (stamps: [(path: String, stamp: FileStamp)], sawTemporary: Bool) {
        condition.lock()
        while !done || helpers > 0 { condition.wait() }
        let (lists, temporary, failure) = (stamps, sawTemporary, self.failure)
        condition.unlock()
        if let failure { throw failure }
        if lists.count == 1 { return (lists[0], temporary) }
        var joined: [(path: String, stamp: FileStamp)] = []
        joined.reserveCapacity(lists.reduce(0) { $0 + $1.count })
        for list in lists { joined += list }
        return (joined, temporary)
    }

    /// The next folder to list, waiting while others are busy and may push more; nil when the
    /// walk is done.
    private func take(failed: inout Error?) -> Pending? {
        condition.lock()
        defer { condition.unlock() }
        if let error = failed.take(), failure == nil { failure = error }
        while pending.isEmpty && busy > 0 && failure == nil { condition.wait() }
        guard let next = pending.popLast(), failure == nil else {
            done = true
            condition.broadcast()
            return nil
        }
        busy += 1
        return next
    }

    private func list(_ folder: Pending, into found: inout [(path: String, stamp: FileStamp)], subfolders: inout [Pending],
                      temporaries: inout Bool) throws {
        let fd: CInt
        if let parent = folder.parent {
            switch Syscall.openDirectory(in: parent.fd, folder.name) {
            case .success(let opened): fd = opened
            // A folder that vanished (or became a file or a link) mid-walk is skipped, as the
            // one-thread walk does.
            case .failure(.noSuchFileOrDirectory), .failure(.notDirectory), .failure(.tooManySymbolicLinkLevels): return
            case .failure(let errno): throw WorkspaceError.system(errno, "list", path: folder.relative)
            }
        } else {
            fd = try Syscall.open(root, O_RDONLY | O_DIRECTORY).orThrow("list", path: ".")
        }
        let open = OpenFolder(fd)
        let names = try Syscall.listDirectory(fd).orThrow("list", path: folder.relative.isEmpty ? "." : folder.relative)
        for name in names {
            if folder.relative.isEmpty && name == WorkspaceLayout.stateFolderName { continue }
            if WorkspaceLayout.isTemporaryName(name) { temporaries = true; continue }
            let relative = folder.relative.isEmpty ? name : folder.relative + "/" + name
            guard case .success(let info) = Syscall.lstat(in: fd, name) else { continue }
            switch FileKind(info.st_mode) {
            case .regular: found.append((relative, FileStamp(FileIdentity(info))))
            case .directory: subfolders.append(Pending(parent: open, name: name, relative: relative))
            default: break
            }
        }
    }
}
