import Glibc

/// A folder in memory (tmpfs) that only this user can enter, for files that live for a moment:
/// making and removing a file there costs no disk metadata. On an ext4 without a journal every
/// new inode is found by skipping the ones deleted in the last seconds, reading their blocks —
/// a file made and removed per trigger cost 0.1–0.7 ms in `relay watch` there, 40 % of its
/// work in a burst of commands.
///
/// For example, a place for a command's private copy of a small file:
/// ```swift
/// let folder = MemoryFolder.privateFolder("watch-1f2e3d4c") ?? workspace.layout.state + "/tmp"
/// ```
package enum MemoryFolder {
    /// `$XDG_RUNTIME_DIR/relay/NAME` when that variable names a folder (the user's own, made by
    /// the login manager), else `/dev/shm/relay-UID/NAME`; made with mode 0700. nil when neither
    /// can be made, or when the folder there is not a real folder of this user's that nobody
    /// else may enter (/dev/shm is shared: another user could have made the name first, or a
    /// link in its place) — callers then keep their files in the workspace's state folder.
    package static func privateFolder(_ name: String) -> String? {
        var bases: [String] = []
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") { bases.append(runtime + "/relay") }
        bases.append("/dev/shm/relay-\(geteuid())")
        return privateFolder(name, under: bases)
    }

    /// `NAME` in the first of `bases` that is (or is made) private; nil when none is.
    static func privateFolder(_ name: String, under bases: [String]) -> String? {
        for base in bases where isPrivate(base) {
            let folder = base + "/" + name
            if isPrivate(folder) { return folder }
        }
        return nil
    }

    /// Makes `path` (mode 0700) unless it exists, then checks what is there without following a
    /// link: a folder owned by this user with no permission for anyone else.
    private static func isPrivate(_ path: String) -> Bool {
        switch Syscall.mkdir(path, mode: 0o700) {
        case .success, .failure(.fileExists): break
        case .failure: return false
        }
        guard case .success(let info) = Syscall.lstat(path) else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == geteuid() && info.st_mode & 0o077 == 0
    }
}
