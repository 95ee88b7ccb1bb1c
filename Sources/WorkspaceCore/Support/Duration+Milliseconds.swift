extension Duration {
    /// The duration in whole milliseconds, rounded to the nearest: what runs, logs and reports
    /// print. One place for it (`package`: every module of Relay, not public API).
    package var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int((Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded())
    }
}
