import Foundation

/// Where the built executables are: next to the test bundle, in the build folder.
enum Binaries {
    static let folder: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }()
    static var relay: String { folder + "/relay" }
    static var stress: String { folder + "/relay-stress" }
}
