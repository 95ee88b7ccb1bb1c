@testable import RelayEngine
import Testing

@Suite struct RepetitionGuardTests {
    @Test func aLineRepeatedThreeTimesIsALoopCutAfterItsFirstAppearance() {
        var guardLoops = RepetitionGuard()
        let text = "Pack these:\n* A first-aid kit with bandages.\n* Water.\n* A first-aid kit with bandages.\n* A first-aid kit with bandages.\n"
        // Fed in pieces, as a model streams it.
        var kept: String?
        var rest = Substring(text)
        while !rest.isEmpty, kept == nil {
            kept = guardLoops.feed(String(rest.prefix(7)))
            rest = rest.dropFirst(7)
        }
        #expect(kept == "Pack these:\n* A first-aid kit with bandages.")
    }

    @Test func shortLinesBlankLinesAndAnUnfinishedLineAreNoLoop() {
        var guardLoops = RepetitionGuard()
        #expect(guardLoops.feed("- a\n- a\n- a\n\n\n\nok\n") == nil)
        var unfinished = RepetitionGuard()
        #expect(unfinished.feed("The same long sentence here.\nThe same long sentence here.\nThe same long sentence he") == nil)
        var other = RepetitionGuard()
        #expect(other.feed("One distinct line of text.\nAnother distinct line.\nA third one, different.\n") == nil)
    }
}
