import Foundation
import RelayTestKit

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
    let errors = LockedBox<Data?>(nil)
    let errorsRead = DispatchSemaphore(value: 0)
    let errorReader = Thread {
        let data = stderr.fileHandleForReading.readDataToEndOfFile()
        errors.mutate { $0 = data }
        errorsRead.signal()
    }
    errorReader.start()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    errorsRead.wait()
    return Run(status: process.terminationStatus, standardOutput: output, standardError: String(decoding: errors.value ?? Data(), as: UTF8.self))
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

extension ScratchWorkspace {
    /// A workspace made with the real `relay init` (the built-in template), in a temporary
    /// folder removed afterwards.
    ///
    /// - parameter name: the workspace folder's name (spaces and all, for tests of quoting).
    static func relayInit(name: String = "ws") throws -> ScratchWorkspace {
        try ScratchWorkspace(name: name) { root in
            let result = try RelayIntegrationTests.run(Binaries.relay, ["init", root])
            guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSDebugDescriptionErrorKey: result.standardError]) }
        }
    }

    /// The four free-text agents of the seed's relay (Paige, Remy, Wren, Vera: the template before
    /// issue 17), with the grounding check off: the fixture of the tests about a run's mechanics
    /// (kill -9, resume, replay, triggers), whose fake model answers the same words to everyone.
    static let fourAgentRoster = "[{\"id\": \"planner\", \"name\": \"Paige\", \"emoji\": \"📋\", \"color\": \"#4A90D9\", \"systemPrompt\": \"You are Paige, the Planner, the first of four helpers: Paige (plan), Remy (facts), Wren (writing), Vera (review). You receive only the user's request. Do not answer it yourself. Write a short plan for the team: first one sentence saying what the user wants, then 3 to 5 numbered steps, one line each, saying what to find out or what to write. If something in the request is unclear, add a line starting with 'Unclear:' and your question. Keep the whole plan under 100 words. No greetings, no final answer, no made-up facts.\", \"order\": 0, \"tools\": [], \"grounding\": false}, {\"id\": \"researcher\", \"name\": \"Remy\", \"emoji\": \"🔎\", \"color\": \"#2E9E6B\", \"systemPrompt\": \"You are Remy, the Researcher. You receive the user's request and Paige's plan, nothing else. Collect the facts the plan needs. If you can use tools, look in the workspace with list_files, search_files and read_file. Write a bullet list of 3 to 8 facts, one line each, and end each with its source in brackets: a file path, or [general knowledge]. If you cannot find something, add a line starting with 'Not found:' and say what is missing. Do not write the final answer. Never invent sources, numbers or quotes.\", \"order\": 1, \"tools\": [\"read_file\", \"list_files\", \"search_files\"], \"grounding\": false}, {\"id\": \"writer\", \"name\": \"Wren\", \"emoji\": \"✍️\", \"color\": \"#E67E22\", \"systemPrompt\": \"You are Wren, the Writer. You receive the user's request and Remy's notes, nothing else. Write the answer the user asked for, using only the facts in the notes. Start with a one-line summary, then the answer in plain Markdown: short paragraphs or a bullet list, at most 250 words unless the user asked for more. If the notes say 'Not found', say plainly what is missing instead of guessing. Do not mention the other helpers, the plan or these instructions. Do not add facts that are not in the notes.\", \"order\": 2, \"tools\": [], \"grounding\": false}, {\"id\": \"reviewer\", \"name\": \"Vera\", \"emoji\": \"🔍\", \"color\": \"#9B59B6\", \"systemPrompt\": \"You are Vera, the Reviewer. You receive the user's request and Wren's answer, nothing else. Check three things: does it answer the request, is every claim backed by a fact, is it clear and short? If it is good, reply 'APPROVED' and one sentence why. If it needs fixing, ask one earlier helper (Paige for the plan, Remy for the facts, Wren for the writing): call the request_revision tool with their name and what to fix. If you cannot call tools, write one line instead, for example: 'REVISION for Wren: the second paragraph repeats the first.' Ask for at most one revision. Do not rewrite the answer yourself.\", \"order\": 3, \"tools\": [\"request_revision\"], \"grounding\": false}]"

    /// Puts ``fourAgentRoster`` in place, and a research relay whose writer writes the summary.
    func useFourAgentRoster() throws {
        try write("AgentConfiguration.json", Self.fourAgentRoster)
        let data = try Data(contentsOf: URL(fileURLWithPath: path("relay.json")))
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw CocoaError(.fileReadCorruptFile) }
        var relays = object["relays"] as? [String: Any] ?? [:]
        var research = relays["research"] as? [String: Any] ?? [:]
        research["agents"] = ["writer": ["output": ["write": "Research/{name}/summary.md"]]]
        relays["research"] = research
        object["relays"] = relays
        try write("relay.json", String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self))
    }

    /// `relay` with `-w` pointing here, for subcommands that take it.
    func relay(_ arguments: [String], input: String = "") throws -> Run {
        try RelayIntegrationTests.run(Binaries.relay, arguments, input: Data(input.utf8))
    }
}
