import ArgumentParser
import Foundation
import RelayServer
import WorkspaceCore

/// The options of the daemon's HTTP API (`relay watch --http`, `relay serve`).
struct HTTPOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Serve the HTTP API on [ADDR:]PORT (a bare port listens on 127.0.0.1; any other address needs a token).",
        valueName: "[addr:]port"))
    var http: String?

    @Option(name: .long, help: ArgumentHelp("The largest request body the API accepts, in bytes (bigger: 413).", valueName: "bytes"))
    var maxBodyBytes: Int = ServerConfiguration.defaultMaxBodyBytes

    @Option(name: .long, help: ArgumentHelp("The largest file PUT /research/NAME accepts, in bytes (bigger: 413).", valueName: "bytes"))
    var maxUploadBytes: Int = ServerConfiguration.defaultMaxUploadBytes

    @Flag(name: .long, help: "Generate an API token into .relay/api-token (mode 0600) if there is none, and print it once.")
    var newToken = false

    func validate() throws {
        if let http { _ = try parse(http) }
        guard maxBodyBytes > 0 else { throw ValidationError("--max-body-bytes must be 1 or more") }
        guard maxUploadBytes > 0 else { throw ValidationError("--max-upload-bytes must be 1 or more") }
    }

    private func parse(_ text: String) throws -> ListenAddress {
        do { return try ListenAddress(parsing: text) } catch let error as APIError { throw ValidationError(error.message) }
    }

    /// The server's configuration, or nil when no HTTP was asked for. The token comes from
    /// RELAY_API_TOKEN, else .relay/api-token; a generated one is printed once, to standard
    /// error, and never logged.
    /// - throws: `CommandFailure` (status 2) for a non-loopback address without a token.
    func configuration(for workspace: Workspace, defaultAddress: String?) throws -> ServerConfiguration? {
        guard let text = http ?? defaultAddress else { return nil }
        let address = try parse(text)
        let file = workspace.layout.state + "/api-token"
        do {
            let found = try APIToken.resolve(environment: ProcessInfo.processInfo.environment, file: file, generate: newToken)
            if let found, found.origin == .generated {
                Terminal.standardError("relay: a new API token, saved in \(file) (mode 0600); shown only this once:\n\(found.token.secret)\n")
            }
            let configuration = ServerConfiguration(address: address, token: found?.token, maxBodyBytes: maxBodyBytes, maxUploadBytes: maxUploadBytes)
            try configuration.validate()
            return configuration
        } catch let error as APIError {
            throw CommandFailure(message: error.message, status: 2)
        }
    }
}
