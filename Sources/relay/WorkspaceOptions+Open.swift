import Foundation
import WorkspaceCore

extension WorkspaceOptions {
    /// The workspace named by -w, $RELAY_WORKSPACE, or found from the current folder.
    func open(durable: Bool = true) throws -> Workspace {
        var workspace: Workspace
        if let path = self.workspace {
            workspace = try Workspace.open(at: path)
        } else if let path = ProcessInfo.processInfo.environment[Workspace.environmentVariable], !path.isEmpty {
            workspace = try Workspace.open(at: path)
        } else {
            workspace = try Workspace.discover(from: FileManager.default.currentDirectoryPath)
        }
        workspace.lockTimeout = .milliseconds(Int64((lockTimeout * 1000).rounded()))
        workspace.durable = durable
        return workspace
    }
}
