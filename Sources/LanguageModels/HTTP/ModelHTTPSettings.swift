/// Timeouts and retries of a model client.
///
/// For example:
/// ```swift
/// var settings = ModelHTTPSettings()
/// settings.idleTimeout = .seconds(30)   // fail when the server is silent for 30 s
/// settings.maxAttempts = 5              // retry 429 and 5xx up to 4 times
/// ```
public struct ModelHTTPSettings: Sendable, Hashable {
    /// How long connecting may take before the server counts as unreachable.
    public var connectTimeout: Duration = .seconds(10)
    /// The longest silence allowed while waiting for the reply to start or continue. A CPU
    /// model reading a 4,096-token prompt can be quiet for a while before its first token.
    public var idleTimeout: Duration = .seconds(120)
    /// Attempts in all for a request answered with 429 or 5xx (1 means no retry).
    public var maxAttempts: Int = 3
    /// The first back-off; it doubles with each retry (with jitter) up to `maxBackoff`.
    public var initialBackoff: Duration = .milliseconds(500)
    /// The longest wait between attempts, also for a server's `Retry-After`.
    public var maxBackoff: Duration = .seconds(30)

    public init() {}

    /// The wait before attempt `attempt + 1`: the server's `Retry-After` when it sent one,
    /// otherwise exponential back-off with ±20 % jitter; never more than `maxBackoff`.
    func backoff(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        if let retryAfter { return min(retryAfter, maxBackoff) }
        let base = initialBackoff * (1 << min(attempt - 1, 16))
        let jittered = base * Double.random(in: 0.8...1.2)
        return min(jittered, maxBackoff)
    }
}

extension Duration {
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }

    var nanosecondsClamped: Int64 {
        let (whole, attoseconds) = components
        return whole > Int64.max / 1_000_000_000 ? Int64.max : whole * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
