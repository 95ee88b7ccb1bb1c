import Foundation

/// Prints a value as one line of JSON with sorted keys, for scripts.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    Terminal.standardOutput(Array(try encoder.encode(value)) + [10])
}
