import Testing
@testable import LanguageModels

/// The SSE parser keeps bytes until a line is whole, so any cut of the stream gives the same events.
@Suite("Server-sent event parser")
struct ServerSentEventParserTests {
    static let stream = "event: greeting\r\ndata: Llamas 🦙 are camélids\r\n\r\n: keep-alive comment\n\ndata: line one\ndata: line two\n\ndata:no space\rdata: after a lone CR\r\r"
    static let expected = [
        ServerSentEvent(event: "greeting", data: "Llamas 🦙 are camélids"),
        ServerSentEvent(data: "line one\nline two"),
        ServerSentEvent(data: "no space\nafter a lone CR"),
    ]

    @Test func theWholeStreamAtOnceGivesEveryEvent() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array(Self.stream.utf8)) == Self.expected)
        #expect(parser.finish() == nil)
    }

    @Test func cuttingTheStreamAtEveryByteGivesTheSameEvents() {
        let bytes = Array(Self.stream.utf8)
        for cut in 1..<bytes.count {
            var parser = ServerSentEventParser()
            let events = parser.feed(bytes[..<cut]) + parser.feed(bytes[cut...])
            #expect(events == Self.expected, "cut at byte \(cut)")
        }
    }

    @Test func feedingOneByteAtATimeKeepsMultiByteCharactersWhole() {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for byte in Self.stream.utf8 { events += parser.feed([byte]) }
        #expect(events == Self.expected)
    }

    @Test func aCRLFSplitBetweenChunksIsOneLineEnd() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("data: a\r".utf8)).isEmpty)
        // Were the \n a second line end, this blank line would dispatch "a" early and lose "b".
        #expect(parser.feed(Array("\ndata: b\r".utf8)).isEmpty)
        #expect(parser.feed(Array("\n\r\n".utf8)) == [ServerSentEvent(data: "a\nb")])
    }

    @Test func aByteOrderMarkAtTheStartIsIgnored() {
        var parser = ServerSentEventParser()
        #expect(parser.feed([0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8)) == [ServerSentEvent(data: "x")])
    }

    @Test func anEventWithoutItsBlankLineIsDispatchedAtTheEnd() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("data: [DONE]".utf8)).isEmpty)
        #expect(parser.finish() == ServerSentEvent(data: "[DONE]"))
    }

    @Test func anEventNameWithoutDataDispatchesNothing() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("event: ping\n\n".utf8)).isEmpty)
    }
}
