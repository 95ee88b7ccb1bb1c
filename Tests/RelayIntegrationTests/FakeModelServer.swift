import Foundation

/// The fake OpenAI-compatible server of Tests/Helpers/fake-model-server (a Python test double,
/// not a model) on a free port of 127.0.0.1, with its request log.
final class FakeModelServer: @unchecked Sendable {
    let port: Int
    let log: String
    private var process: Process?

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Helpers/fake-model-server/fake-model-server.py").path
    }

    var baseURL: String { "http://127.0.0.1:\(port)/v1" }

    /// - parameter delay: seconds the server waits before each reply.
    init(port: Int? = nil, delay: Double = 0, log: String) {
        self.port = port ?? Self.freePort()
        self.log = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        self.delay = delay
    }

    private let delay: Double

    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script, "\(port)", log, "\(delay)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Ready when it accepts connections.
        let deadline = Date().addingTimeInterval(20)
        while !Self.accepts(port) {
            guard Date() < deadline, process.isRunning else { throw WatchTestError("the fake model server did not start on port \(port)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }

    /// The requests it answered: (agent, the focused prompt).
    var requests: [(agent: String, user: String)] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return (object["agent"] as? String ?? "", object["user"] as? String ?? "")
        }
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
