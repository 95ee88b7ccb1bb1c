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

/// A child process with captured output.
struct Run {
    var status: Int32
    var standardOutput: Data
    var standardError: String
    var text: String { String(decoding: standardOutput, as: UTF8.self) }
}

/// Runs an executable to completion, feeding `input` on stdin. A test that needs a running
/// child it can kill uses `spawn` instead.
@discardableResult
func run(_ executable: String, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:],
         in directory: String? = nil) throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    env.removeValue(forKey: "RELAY_WORKSPACE")
    for (key, value) in environment { env[key] = value }
    process.environment = env
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let writer = Thread {
        stdin.fileHandleForWriting.write(input)
        try? stdin.fileHandleForWriting.close()
    }
    writer.start()
    let errors = LockedData()
    let errorReader = Thread { errors.set(stderr.fileHandleForReading.readDataToEndOfFile()) }
    errorReader.start()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errors.done { Thread.sleep(forTimeInterval: 0.001) }
    return Run(status: process.terminationStatus, standardOutput: output, standardError: String(decoding: errors.data, as: UTF8.self))
}

/// Starts a child that runs until killed; its output goes nowhere.
/// With `errorLog`, its standard error goes to that file, for the test's failure message.
func spawn(_ executable: String, _ arguments: [String], errorLog: String? = nil, environment: [String: String] = [:]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    process.standardOutput = FileHandle.nullDevice
    if let errorLog {
        FileManager.default.createFile(atPath: errorLog, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errorLog)
    } else {
        process.standardError = FileHandle.nullDevice
    }
    try process.run()
    return process
}

/// Sends SIGKILL and waits for the child to be gone.
func killHard(_ process: Process) {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = Data()
    private var finished = false
    func set(_ data: Data) { lock.withLock { stored = data; finished = true } }
    var data: Data { lock.withLock { stored } }
    var done: Bool { lock.withLock { finished } }
}

/// A workspace made with the real `relay init`, in a temporary folder removed afterwards.
final class ScratchWorkspace: Sendable {
    let base: String
    var root: String { base + "/ws" }

    init() throws {
        base = FileManager.default.temporaryDirectory.path + "/relay-it-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let result = try run(Binaries.relay, ["init", root])
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSDebugDescriptionErrorKey: result.standardError]) }
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }

    func path(_ relative: String) -> String { root + "/" + relative }

    func contents(_ relative: String) -> String? { try? String(contentsOfFile: path(relative), encoding: .utf8) }

    /// Writes a file as a person's editor would (folders made as needed).
    func write(_ relative: String, _ text: String) throws {
        let url = URL(fileURLWithPath: path(relative))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func temporaries(in folder: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? root : path(folder))) ?? [])
            .filter { $0.hasPrefix(".relay-tmp-") }
    }

    /// `relay` with `-w` pointing here, for subcommands that take it.
    func relay(_ arguments: [String], input: String = "") throws -> Run {
        try run(Binaries.relay, arguments, input: Data(input.utf8))
    }
}
