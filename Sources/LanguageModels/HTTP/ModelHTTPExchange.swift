import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Synchronization

/// Sends a model client's requests: JSON out, status checks, retries with back-off on 429 and
/// 5xx (honouring `Retry-After`), and errors that name the URL and say what to do. Once a
/// reply has started streaming it is never retried (the caller has seen part of it).
struct ModelHTTPExchange: Sendable {
    /// The server's API root, named when nothing answers or the server goes silent.
    var baseURL: String
    var settings: ModelHTTPSettings
    var logger: Logger
    /// What to tell a person when nothing answers, e.g. "run `make model` or set RELAY_MODEL_URL".
    var unreachableHint: String
    /// The environment variable that holds the key, named when the server refuses the key.
    var keyVariable: String

    private var client: HTTPClient { HTTPClientPool.client(for: settings) }

    /// POSTs `body` as JSON and returns the response once its status is 2xx, its body unread.
    func post(_ url: String, headers: [(String, String)], body: Data) async throws -> HTTPClientResponse {
        var attempt = 0
        while true {
            attempt += 1
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Accept", value: "text/event-stream, application/json")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: body))
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: .distantFuture, logger: logger)
            } catch where Self.isStaleConnection(error) && attempt < settings.maxAttempts {
                // A kept-alive connection the server had just closed: nothing was answered, so
                // the request is sent again on a fresh one.
                logger.info("the model server closed a kept-alive connection; sending again", metadata: [
                    "relay.model.url": "\(url)", "relay.model.attempt": "\(attempt)", "relay.model.error": "\(error)",
                ])
                try await Task.sleep(for: .milliseconds(20 * attempt))
                continue
            } catch {
                throw mapTransportError(error, url: url)
            }
            let status = Int(response.status.code)
            if (200..<300).contains(status) { return response }
            let text = await Self.readSome(response.body)
            if (status == 429 || status >= 500) && attempt < settings.maxAttempts {
                let retryAfter = response.headers.first(name: "Retry-After").flatMap(Self.parseRetryAfter)
                let delay = settings.backoff(afterAttempt: attempt, retryAfter: retryAfter)
                logger.info("model server answered with an error; retrying", metadata: [
                    "relay.model.url": "\(url)", "relay.model.status": "\(status)",
                    "relay.model.attempt": "\(attempt)", "relay.model.retry_in_s": "\(delay.seconds)",
                ])
                try await Task.sleep(for: delay)
                continue
            }
            throw statusError(status, body: text, url: url, attempts: attempt)
        }
    }

    /// GETs `url` and returns its body (at most 1 MiB) when the status is 2xx.
    func get(_ url: String, headers: [(String, String)]) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await execute(request, url: url)
        let status = Int(response.status.code)
        let text = await Self.readSome(response.body, limit: 1 << 20)
        guard (200..<300).contains(status) else { throw statusError(status, body: text, url: url, attempts: 1) }
        return Data(text.utf8)
    }

    private func execute(_ request: HTTPClientRequest, url: String) async throws -> HTTPClientResponse {
        do {
            return try await client.execute(request, deadline: .distantFuture, logger: logger)
        } catch {
            throw mapTransportError(error, url: url)
        }
    }

    /// Whether a request failed on a connection the server closed under it (a kept-alive
    /// connection reused just as the server dropped it), rather than finding no server at all.
    static func isStaleConnection(_ error: any Error) -> Bool {
        if let error = error as? ChannelError {
            switch error {
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed: return true
            default: return false
            }
        }
        if let error = error as? HTTPClientError, error == .remoteConnectionClosed { return true }
        if let error = error as? IOError, error.errnoCode == ECONNRESET || error.errnoCode == EPIPE { return true }
        return false
    }

    /// Turns an AsyncHTTPClient or NIO error into a ``LanguageModelError`` naming `url`.
    func mapTransportError(_ error: any Error, url: String, midReply: Bool = false) -> any Error {
        if error is LanguageModelError || error is CancellationError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return CancellationError()
            case .readTimeout, .deadlineExceeded:
                return LanguageModelError(
                    .timeout,
                    "the model server at \(baseURL) went silent for more than \(Int(settings.idleTimeout.seconds)) s "
                        + (midReply ? "in the middle of its reply" : "before answering")
                        + " — check that it is not overloaded, or raise the timeout",
                    url: url, underlying: error)
            case .connectTimeout:
                return LanguageModelError(
                    .unreachable,
                    "no model server at \(baseURL) (connecting timed out after \(Int(settings.connectTimeout.seconds)) s) — \(unreachableHint)",
                    url: url, underlying: error)
            case .remoteConnectionClosed where midReply:
                return LanguageModelError(.malformedResponse, "the model server at \(url) closed the connection in the middle of its reply", url: url, underlying: error)
            default: break
            }
        }
        if midReply {
            return LanguageModelError(.malformedResponse, "the reply from \(url) broke off: \(error)", url: url, underlying: error)
        }
        let reason = Self.shortReason(error)
        return LanguageModelError(.unreachable, "no model server at \(baseURL) (\(reason)) — \(unreachableHint)", url: baseURL, underlying: error)
    }

    private func statusError(_ status: Int, body: String, url: String, attempts: Int) -> LanguageModelError {
        let said = Self.serverMessage(body)
        let tried = attempts > 1 ? ", tried \(attempts) times" : ""
        switch status {
        case 401, 403:
            return LanguageModelError(.authentication, "the model server at \(url) refused the key (\(status): \(said)) — set \(keyVariable) to a valid key", url: url, status: status)
        case 404:
            return LanguageModelError(.httpStatus, "\(url) answered 404 (\(said)) — check baseURL (OpenAI-compatible servers usually end in /v1) and the model name", url: url, status: status)
        case 429:
            return LanguageModelError(.httpStatus, "the model server at \(url) is rate limiting (429\(tried)): \(said) — wait and try again", url: url, status: status)
        case 500...:
            return LanguageModelError(.httpStatus, "the model server at \(url) failed (\(status)\(tried)): \(said) — see the server's log", url: url, status: status)
        default:
            return LanguageModelError(.httpStatus, "the model server at \(url) rejected the request (\(status)): \(said)", url: url, status: status)
        }
    }

    /// The server's own words from an error body: `error.message`, `message`, or the start of the text.
    static func serverMessage(_ body: String) -> String {
        if let json = try? JSONValue(parsing: body) {
            if let message = json["error"]?["message"]?.stringValue ?? json["message"]?.stringValue ?? json["error"]?.stringValue {
                return message
            }
        }
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "no details" : String(trimmed.prefix(300))
    }

    /// The one parser of HTTP dates ("Wed, 21 Oct 2026 07:28:00 GMT"), built once.
    private static let httpDate: Mutex<HTTPDateFormatter> = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return Mutex(HTTPDateFormatter(formatter: formatter))
    }()

    private struct HTTPDateFormatter: @unchecked Sendable { let formatter: DateFormatter }

    /// `Retry-After` as delay-seconds or an HTTP date.
    static func parseRetryAfter(_ value: String) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds >= 0 { return .milliseconds(Int64(seconds * 1000)) }
        guard let date = httpDate.withLock({ $0.formatter.date(from: trimmed) }) else { return nil }
        return .milliseconds(Int64(max(0, date.timeIntervalSinceNow) * 1000))
    }

    static func readSome(_ body: HTTPClientResponse.Body, limit: Int = 64 * 1024) async -> String {
        var bytes: [UInt8] = []
        do {
            for try await buffer in body {
                bytes.append(contentsOf: buffer.readableBytesView.prefix(limit - bytes.count))
                if bytes.count >= limit { break }
            }
        } catch {}
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func shortReason(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("Connection refused") || text.contains("connectionRefused") || text.contains("ECONNREFUSED") { return "connection refused" }
        if text.contains("NXDOMAIN") || text.contains("resolve") || text.contains("Name or service not known") { return "host name not found" }
        return String(text.prefix(200))
    }
}

/// Runs `body` in a task feeding a stream; cancelling the consumer cancels the task, and an
/// error ends the stream.
func makeEventStream(
    _ body: @escaping @Sendable (AsyncThrowingStream<ModelEvent, any Error>.Continuation) async throws -> Void
) -> AsyncThrowingStream<ModelEvent, any Error> {
    AsyncThrowingStream { continuation in
        let task = Task {
            do {
                try await body(continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
