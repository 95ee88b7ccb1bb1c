import WorkspaceCore

/// Files that never become changes: Relay's state and temporary files, and the litter editors
/// and sync tools leave while saving.
public enum IgnoreRules {
    /// Names of the files tests and tools drop to learn that the watcher has caught up: it
    /// handles them like any file, then deletes them (as watchman does with its cookies).
    public static let cookiePrefix = ".relay-cookie-"

    public static func isIgnored(_ path: String) -> Bool {
        if path == WorkspaceLayout.stateFolderName || path.hasPrefix(WorkspaceLayout.stateFolderName + "/") { return true }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return isLitter(name)
    }

    static func isLitter(_ name: String) -> Bool {
        if name.hasPrefix(WorkspaceLayout.temporaryPrefix) { return true }
        if name == "4913" { return true }                       // vim's probe for a writable folder
        if name.hasSuffix("~") { return true }                  // backups: vim, emacs, gedit
        if name.hasPrefix(".#") { return true }                 // emacs lock links
        if name.hasPrefix("#") && name.hasSuffix("#") { return true }  // emacs auto-save
        if isVimSwap(name) { return true }                      // .name.swp, .swo, .swx, …
        if name.hasPrefix(".goutputstream-") { return true }    // GTK's temp-and-rename
        if name.hasPrefix(".syncthing.") && name.hasSuffix(".tmp") { return true }
        if name.hasPrefix("~syncthing~") && name.hasSuffix(".tmp") { return true }
        if name.hasSuffix(".part") || name.hasSuffix(".crdownload") { return true }  // downloads in progress
        return false
    }

    private static func isVimSwap(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.count >= 5 else { return false }
        let suffix = name.suffix(4)
        return suffix.hasPrefix(".sw") && suffix.last.map { $0.isLetter } == true
    }

    public static func isCookie(_ path: String) -> Bool {
        (path.split(separator: "/").last.map(String.init) ?? path).hasPrefix(cookiePrefix)
    }
}
