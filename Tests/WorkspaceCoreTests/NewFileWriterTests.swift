import Foundation
import Testing
@testable import WorkspaceCore

/// The threads a write batch makes its new files on: two lanes side by side, results in the
/// order given, a path refused there is reported and the rest go on, any other failure stops
/// what waits and comes back to the caller with what was made handed over for cleaning up.
@Suite("The write batch's new-file writer")
struct NewFileWriterTests {
    struct Broken: Error {}

    @Test func jobsRunInOrderAndARefusedPathIsReportedWhileTheRestGoOn() throws {
        let writer = NewFileWriter<Int>(slots: 4)
        for i in 0..<200 {
            try writer.submit(path: "p\(i)") { _ in
                if i == 17 { throw WorkspaceError(.notADirectory, "p17: 'x' is a file where a folder is expected", path: "p17") }
                return i
            }
        }
        let (made, refused) = try writer.finish()
        #expect(made == (0..<200).filter { $0 != 17 })
        #expect(refused == ["p17"])
        // The writer starts afresh.
        try writer.submit(path: "again") { _ in 1 }
        #expect(try writer.finish().made == [1])
    }

    /// The first job waits until the second has run: only two lanes side by side get past it
    /// (one lane would wait out the guard), and the results still come in the order given.
    @Test func twoLanesRunSideBySideAndTheResultsKeepTheOrderGiven() throws {
        let writer = NewFileWriter<Int>(slots: 4, lanes: 2)
        let secondRan = DispatchSemaphore(value: 0)
        let waitedOut = LockedCounter()
        try writer.submit(path: "first") { _ in
            if secondRan.wait(timeout: .now() + 30) == .timedOut { waitedOut.add() }
            return 0
        }
        try writer.submit(path: "second") { _ in
            secondRan.signal()
            return 1
        }
        #expect(try writer.finish().made == [0, 1])
        #expect(waitedOut.value == 0, "the second job ran while the first was still running")
    }

    /// One lane: nothing after the failing job runs.
    @Test func aFailureStopsWhatWaitsIsThrownAndWhatWasMadeIsHandedBackForCleaningUp() throws {
        let writer = NewFileWriter<Int>(slots: 2, lanes: 1)
        let ran = LockedCounter()
        var thrownAtSubmit = false
        for i in 0..<50 {
            do {
                try writer.submit(path: "p\(i)") { _ in
                    ran.add()
                    if i == 3 { throw Broken() }
                    return i
                }
            } catch is Broken {
                thrownAtSubmit = true
                break
            }
        }
        var cleaned: [Int] = []
        #expect(throws: Broken.self) { _ = try writer.finish(cleanUp: { cleaned = $0 }) }
        #expect(cleaned == [0, 1, 2])
        #expect(thrownAtSubmit, "a submit after the failure throws it")
        #expect(ran.value == 4, "no job after the failing one ran: \(ran.value)")
        // Afresh after the failure was reported.
        try writer.submit(path: "next") { _ in 7 }
        #expect(try writer.finish().made == [7])
    }
}

private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
