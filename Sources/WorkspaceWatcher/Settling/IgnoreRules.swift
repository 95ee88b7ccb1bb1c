import WorkspaceCore

/// Files that never become changes: Relay's state and temporary files, and the litter editors
/// and sync tools leave while saving.
///
/// Every path of the start-up walk passes through here (100,000 of them in a big tree), so the
/// checks work on UTF-8 bytes: no Character is formed and nothing is allocated.
public enum IgnoreRules {
    /// Names of the files tests and tools drop to learn that the watcher has caught up: it
    /// handles them like any file, then deletes them (as watchman does with its cookies).
    public static let cookiePrefix = ".relay-cookie-"

    public static func isIgnored(_ path: String) -> Bool {
        let state = WorkspaceLayout.stateFolderName
        if path == state || path.utf8.starts(with: (state + "/").utf8) { return true }
        return isLitter(lastName(of: path))
    }

    static func isLitter(_ name: Substring.UTF8View) -> Bool {
        func starts(_ prefix: StaticString) -> Bool { name.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)) }
        func ends(_ suffix: StaticString) -> Bool {
            name.reversed().starts(with: UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount).reversed())
        }
        if name.starts(with: WorkspaceLayout.temporaryPrefix.utf8) { return true }
        if name.elementsEqual("4913".utf8) { return true }            // vim's probe for a writable folder
        if ends("~") { return true }                                  // backups: vim, emacs, gedit
        if starts(".#") { return true }                               // emacs lock links
        if starts("#") && ends("#") { return true }                   // emacs auto-save
        if isVimSwap(name) { return true }                            // .name.swp, .swo, .swx, …
        if starts(".goutputstream-") { return true }                  // GTK's temp-and-rename
        if starts(".syncthing.") && ends(".tmp") { return true }
        if starts("~syncthing~") && ends(".tmp") { return true }
        if ends(".part") || ends(".crdownload") { return true }       // downloads in progress
        return false
    }

    static func isLitter(_ name: String) -> Bool { isLitter(Substring(name).utf8) }

    /// ".name.sw" and one ASCII letter.
    private static func isVimSwap(_ name: Substring.UTF8View) -> Bool {
        guard name.first == UInt8(ascii: "."), name.count >= 5 else { return false }
        let tail = name.suffix(4)
        guard tail.starts(with: ".sw".utf8), let last = tail.last else { return false }
        return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(last | 0x20)
    }

    public static func isCookie(_ path: String) -> Bool {
        lastName(of: path).starts(with: cookiePrefix.utf8)
    }

    /// The path's last component, as UTF-8.
    private static func lastName(of path: String) -> Substring.UTF8View {
        let utf8 = path.utf8
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return path[...].utf8 }
        return path[utf8.index(after: slash)...].utf8
    }
}
