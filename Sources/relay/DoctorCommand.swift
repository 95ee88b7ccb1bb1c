import ArgumentParser
import Foundation
import WorkspaceWatcher
import LanguageModels
import RelayEngine
import WorkspaceCore

/// `relay doctor`: which model server Relay would talk to, whether it answers, what it serves,
/// whether it calls tools natively, and how fast it is.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the model configuration and the model server it names.",
        discussion: """
            Reads the "model" section of the workspace's relay.json (or the defaults outside a \
            workspace), applies RELAY_MODEL_URL and RELAY_MODEL, then asks the server which models \
            it serves, whether it calls a tool natively (one tiny request), and how many tokens a \
            second it writes on a short prompt. Exit status: 0 healthy, 1 the server does not \
            answer or a check failed, 2 bad configuration.

            Examples:
              relay doctor
              relay doctor -w ~/notes --json
              RELAY_MODEL_URL=http://127.0.0.1:11434/v1 RELAY_MODEL=llama3.2 relay doctor
            """
    )

    @Option(name: [.customShort("w"), .long], help: ArgumentHelp(
        "The workspace whose relay.json to read (default: $RELAY_WORKSPACE, else the workspace at or above the current folder, else none).",
        valueName: "dir"))
    var workspace: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Flag(help: "Only check that the server answers; skip the tool and speed probes.")
    var quick = false

    @Option(help: ArgumentHelp("Seconds the server may stay silent before a check fails.", valueName: "seconds"))
    var timeout: Double = 60

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a number of seconds above 0") }
    }

    func run() async throws {
        var report = DoctorReport()
        let found = try findWorkspace()
        // The same choice of model every command makes (RelayEngine's WorkspaceModels).
        let models = try WorkspaceModels(workspace: found)
        let configuration = models.configuration
        report.configuration = models.file ?? (found == nil ? "defaults (not in a workspace)" : "defaults (the workspace has no relay.json)")
        report.overrides = models.overrides
        report.provider = configuration.provider.rawValue
        report.baseURL = configuration.provider == .scripted ? nil : configuration.resolvedBaseURL
        report.model = configuration.provider == .scripted ? configuration.script : configuration.resolvedModel
        report.toolMode = configuration.toolMode.rawValue
        report.effectiveToolMode = configuration.resolvedToolMode.rawValue

        var settings = ModelHTTPSettings()
        settings.idleTimeout = .milliseconds(Int64(timeout * 1000))
        settings.connectTimeout = .seconds(5)
        settings.maxAttempts = 2
        let model = try models.make(settings: settings, logger: RelayLogging.logger)
        report.describedAs = model.description
        let client = (model as? StructuredToolModel)?.base ?? (model as? ToolsWithheldModel)?.base ?? model

        var failure: String?
        let started = ContinuousClock.now
        do {
            report.servedModels = try await client.servedModels()
            report.answers = true
            report.answerMilliseconds = (ContinuousClock.now - started).milliseconds
            report.concurrentRequests = await (client as? OpenAICompatibleModel)?.concurrentRequests()
        } catch {
            report.answers = false
            failure = message(error)
        }
        if report.answers == true && !quick {
            do {
                report.nativeToolCalls = try await probeNativeTools(client)
                try await measureSpeed(model, into: &report)
            } catch {
                failure = message(error)
            }
        }
        report.inotify = InotifyReport(limits: InotifyLimits.current(), usage: InotifyLimits.usage())
        if let workspace = found {
            do {
                let relays = try RelayConfiguration.load(from: workspace)
                report.parallelWanted = relays.relays.filter { $0.mode == .plan }.map(\.plan.parallel).max()
                report.rosters = try relays.relays.map { relay in
                    "\(relay.name) (\(try relays.roster(for: relay, in: workspace).agents.count) agents)"
                }.joined(separator: ", ")
            } catch {
                report.rosters = nil
                report.rosterError = "\(error)"
                failure = failure ?? "\(error)"
            }
        }
        report.error = failure
        report.healthy = failure == nil
        if json { try printJSON(report) } else { printText(report) }
        if let failure { throw CommandFailure(message: failure, status: 1) }
    }

    /// The workspace named by -w or $RELAY_WORKSPACE, or found from the current folder; nil
    /// outside a workspace.
    private func findWorkspace() throws -> Workspace? {
        let environment = ProcessInfo.processInfo.environment
        if let path = self.workspace {
            return try Workspace.open(at: path)
        } else if let path = environment[Workspace.environmentVariable], !path.isEmpty {
            return try Workspace.open(at: path)
        }
        return try? Workspace.discover(from: FileManager.default.currentDirectoryPath)
    }

    /// One tiny request that a model with native tool calling answers with a call.
    private func probeNativeTools(_ client: any LanguageModel) async throws -> Bool {
        let tool = ToolDefinition(name: "get_time", description: "Get the current time.", parameters: ["type": "object", "properties": [:]])
        let request = ModelRequest(
            messages: [.user("What time is it? Call the get_time tool.")], tools: [tool],
            options: ModelOptions(temperature: 0, maxTokens: 32, toolChoice: .auto))
        do {
            let reply = try await client.complete(request)
            return !reply.toolCalls.isEmpty
        } catch let error as LanguageModelError where error.code == .httpStatus && (error.status ?? 0) < 500 {
            return false  // a server that rejects `tools` outright does not call them
        }
    }

    private func measureSpeed(_ model: any LanguageModel, into report: inout DoctorReport) async throws {
        let request = ModelRequest(messages: [.user("Count from 1 to 40, separated by spaces.")], options: ModelOptions(temperature: 0, maxTokens: 64))
        let started = ContinuousClock.now
        var firstToken: ContinuousClock.Instant?
        var usage: TokenUsage?
        for try await event in model.stream(request) {
            switch event {
            case .text: if firstToken == nil { firstToken = .now }
            case .usage(let counted): usage = counted
            default: break
            }
        }
        let ended = ContinuousClock.now
        report.firstTokenMilliseconds = firstToken.map { ($0 - started).milliseconds }
        report.completionTokens = usage?.completionTokens
        if let firstToken, let tokens = usage?.completionTokens, tokens > 1 {
            let seconds = (ended - firstToken).seconds
            report.tokensPerSecond = seconds > 0 ? ((Double(tokens - 1) / seconds) * 10).rounded() / 10 : nil
        }
    }

    private func message(_ error: any Error) -> String {
        (error as? LanguageModelError)?.message ?? "\(error)"
    }

    private func printText(_ report: DoctorReport) {
        func row(_ label: String, _ value: String) { print(label.padding(toLength: 15, withPad: " ", startingAt: 0) + value) }
        row("Configuration", report.configuration)
        if !report.overrides.isEmpty { row("Overrides", report.overrides.joined(separator: ", ") + " (from the environment)") }
        row("Provider", report.provider + (report.provider == "scripted" ? " — replies come from a file, not a model" : ""))
        if let url = report.baseURL { row("URL", url) }
        row(report.provider == "scripted" ? "Script" : "Model", report.model ?? "(none)")
        row("Tool mode", report.toolMode == report.effectiveToolMode ? report.toolMode : "\(report.toolMode) → \(report.effectiveToolMode)")
        switch report.answers {
        case true?:
            let served = report.servedModels.isEmpty ? "" : ", serves " + report.servedModels.prefix(5).joined(separator: ", ")
            row("Server", Terminal.paint("answers", .green, stream: 1) + " in \(report.answerMilliseconds ?? 0) ms" + served)
        case false?: row("Server", Terminal.paint("does not answer", .red, stream: 1))
        case nil: break
        }
        if let slots = report.concurrentRequests {
            let wanted = report.parallelWanted ?? 0
            row("Slots", "\(slots) request\(slots == 1 ? "" : "s") at once"
                + (wanted > slots ? Terminal.paint(" — fewer than the \(wanted) parallel workers relay.json asks for; the rest wait (`make model` starts 2)", .yellow, stream: 1) : ""))
        }
        if let native = report.nativeToolCalls {
            row("Native tools", native
                ? "yes — it called the probe tool (toolMode \"native\" works)"
                : "no — it answered the probe in text; toolMode \"structured\" (or \"auto\") gets tool calls from it")
        }
        if let speed = report.tokensPerSecond {
            row("Speed", "\(speed) tokens/s, first token after \(report.firstTokenMilliseconds ?? 0) ms (\(report.completionTokens ?? 0) tokens)")
        } else if report.answers == true && !quick && report.error == nil {
            row("Speed", "not measured (the reply was too short)")
        }
        if let inotify = report.inotify {
            let limit = inotify.limits.namespaceMaxWatches.map { min($0, inotify.limits.maxUserWatches ?? $0) } ?? inotify.limits.maxUserWatches
            row("inotify", "\(inotify.usage.watches) of \(limit.map(String.init) ?? "?") watches in use (fs.inotify.max_user_watches), "
                + "\(inotify.usage.instances) of \(inotify.limits.maxUserInstances.map(String.init) ?? "?") instances, "
                + "queue \(inotify.limits.maxQueuedEvents.map(String.init) ?? "?") events")
            if let limit, limit - inotify.usage.watches < 10_000 {
                row("", Terminal.paint("few watches left: `relay watch` needs one per folder; raise it with sudo sysctl fs.inotify.max_user_watches=\(max(524_288, limit * 2))", .yellow, stream: 1))
            }
        }
        if let rosters = report.rosters { row("Relays", rosters + " — rosters valid (`relay agents` shows them)") }
        if let problem = report.rosterError { row("Relays", Terminal.paint(problem, .red, stream: 1)) }
        row("Status", report.healthy ? Terminal.paint("healthy", .green, stream: 1) : Terminal.paint("not healthy", .red, stream: 1))
    }
}

/// What `relay doctor --json` prints.
struct DoctorReport: Encodable {
    var configuration = ""
    var overrides: [String] = []
    var provider = ""
    var baseURL: String?
    var model: String?
    var toolMode = ""
    var effectiveToolMode = ""
    var describedAs = ""
    var answers: Bool?
    var answerMilliseconds: Int?
    var servedModels: [String] = []
    /// How many requests the server takes at once (llama-server's slots), when it says.
    var concurrentRequests: Int?
    /// The most parallel workers a plan relay of the workspace asks for.
    var parallelWanted: Int?
    var nativeToolCalls: Bool?
    var tokensPerSecond: Double?
    var firstTokenMilliseconds: Int?
    var completionTokens: Int?
    var healthy = false
    var error: String?
    var inotify: InotifyReport?
    /// The relays and their roster sizes, when every roster is valid.
    var rosters: String?
    var rosterError: String?
}

/// The kernel's inotify limits and this user's use of them, for the watcher.
struct InotifyReport: Encodable {
    var limits: InotifyLimits
    var usage: InotifyLimits.Usage
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
