import Foundation

/// The first version of every visible file of a new workspace: `context.md`, `relay.json`,
/// the roster, and a README in each folder. The repository's `workspace-template/` folder is
/// the source; `make template` embeds it in the binary (`EmbeddedTemplate.swift`), so a
/// copied `relay` binary can still `init`.
public struct WorkspaceTemplate: Sendable {
    public struct File: Sendable, Equatable {
        /// Relative path inside the workspace.
        public var path: String
        public var bytes: [UInt8]
    }

    public var files: [File]

    public init(files: [File]) { self.files = files.sorted { $0.path < $1.path } }

    /// The template built into this binary.
    public static var embedded: WorkspaceTemplate {
        WorkspaceTemplate(files: EmbeddedTemplate.files.map { entry in
            File(path: entry.path, bytes: Array(Data(base64Encoded: entry.base64) ?? Data()))
        })
    }

    /// A template read from a folder (every regular file below it, hidden ones included).
    ///
    /// - throws: `.notAWorkspace` when the folder is missing, `.invalidInput` for a path the
    ///   sandbox would refuse (a template must not write outside the workspace or in `.relay/`).
    public static func load(from folder: String) throws -> WorkspaceTemplate {
        let root = try Workspace.canonicalFolder(folder)
        var files: [File] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let absolute = relative.isEmpty ? root : root + "/" + relative
            for name in try Syscall.listDirectory(absolute).orThrow("list", path: absolute) {
                let child = relative.isEmpty ? name : relative + "/" + name
                if child == WorkspaceLayout.stateFolderName {
                    throw WorkspaceError(.invalidInput, "\(root)/\(child): a template may not contain .relay/", path: child)
                }
                let info = try Syscall.lstat(root + "/" + child).orThrow("stat", path: child)
                switch FileKind(info.st_mode) {
                case .directory: pending.append(child)
                case .regular:
                    let snapshot = try FileSnapshot.read(root + "/" + child, displayPath: child)
                    files.append(File(path: child, bytes: snapshot?.bytes ?? []))
                default:
                    throw WorkspaceError(.invalidInput, "\(root)/\(child): a template holds only files and folders", path: child)
                }
            }
        }
        return WorkspaceTemplate(files: files)
    }
}
