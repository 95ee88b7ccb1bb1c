import Foundation
import LanguageModels
@testable import RelayEngine
import RelayTestKit
import WorkspaceCore

extension ScratchWorkspace {
    func records(_ id: String) throws -> [JournalRecord] { try RunStore(workspace: workspace).records(id) }
}
