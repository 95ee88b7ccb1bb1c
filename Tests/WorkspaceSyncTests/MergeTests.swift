import Foundation
import RelayTestKit
import Testing
import WorkspaceCore
@testable import WorkspaceSync

@Suite("Line diffs and the three-way merge")
struct MergeTests {
    func lines(_ text: String) -> [Substring] { LineDiff.lines(text[...]) }

    func apply(_ diff: LineDiff, to old: [Substring]) -> [Substring] {
        var result: [Substring] = []
        var cursor = 0
        for hunk in diff.hunks {
            result += old[cursor..<hunk.oldRange.lowerBound]
            result += hunk.newLines
            cursor = hunk.oldRange.upperBound
        }
        return result + old[cursor...]
    }

    @Test func linesKeepEveryByte() {
        for text in ["", "a", "a\n", "a\nb", "a\n\nb\n", "\n\n"] {
            #expect(lines(text).joined() == text)
        }
    }

    @Test(arguments: 1...40)
    func aDiffAppliedToTheOldTextGivesTheNewText(seed: Int) {
        var random = SeededGenerator(state: UInt64(seed))
        let vocabulary = ["alpha\n", "beta\n", "gamma\n", "delta\n", "epsilon\n", "zeta\n"]
        let old = (0..<Int.random(in: 0...30, using: &random)).map { _ in Substring(vocabulary.randomElement(using: &random)!) }
        var new = old
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            let position = Int.random(in: 0...new.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: new.insert(Substring(vocabulary.randomElement(using: &random)!), at: position)
            case 1: if position < new.count { new.remove(at: position) }
            default: if position < new.count { new[position] = Substring(vocabulary.randomElement(using: &random)!) }
            }
        }
        let diff = LineDiff(old: old, new: new)
        #expect(apply(diff, to: old) == new, "seed \(seed)")
        if old == new { #expect(diff.hunks.isEmpty) }
    }

    static let context = """
        # Context

        ## Goals
        - write the llama essay

        ## People
        - Ada prefers short answers

        ## Decisions
        - use SmolLM2 locally

        """

    @Test func nonOverlappingHandEditsOfContextMdMergeCleanly() {
        let ours = Self.context.replacingOccurrences(of: "- write the llama essay\n", with: "- write the llama essay\n- and the alpaca one\n")
        let theirs = Self.context.replacingOccurrences(of: "- use SmolLM2 locally\n", with: "- use SmolLM2 locally\n- sync with the desktop nightly\n")
        let result = ThreeWayMerge.merge(base: Self.context, ours: ours, theirs: theirs, winner: .ours)
        #expect(result.conflicts == 0)
        #expect(result.text.contains("- and the alpaca one\n") && result.text.contains("- sync with the desktop nightly\n"))
        let swapped = ThreeWayMerge.merge(base: Self.context, ours: theirs, theirs: ours, winner: .theirs)
        #expect(swapped.text == result.text, "the merge does not depend on which side runs it")
    }

    @Test func overlappingEditsKeepTheWinnersLinesAndCountAConflict() {
        let ours = Self.context.replacingOccurrences(of: "- Ada prefers short answers", with: "- Ada prefers bullet points")
        let theirs = Self.context.replacingOccurrences(of: "- Ada prefers short answers", with: "- Ada prefers long answers")
        let oursWins = ThreeWayMerge.merge(base: Self.context, ours: ours, theirs: theirs, winner: .ours)
        #expect(oursWins.conflicts == 1 && oursWins.text == ours)
        let theirsWins = ThreeWayMerge.merge(base: Self.context, ours: ours, theirs: theirs, winner: .theirs)
        #expect(theirsWins.conflicts == 1 && theirsWins.text == theirs)
    }

    // The shapes of the corpus cases (relay-merge-corpus, docs/modules/WorkspaceSync.md) where
    // `git merge-file` merged cleanly and this merge made a conflict copy, cut down to a few
    // lines; and the shapes that must stay conflicts however the hunks are placed.

    /// A file with Windows line ends ("\r\n" is one Character in Swift) was one single line to
    /// the diff, so any two edits of it conflicted (swift-evolution's 0252-callable.md).
    @Test func aFileWithWindowsLineEndsMergesEditsOfDifferentLines() {
        #expect(lines("a\r\nb\r\n\r\nc") == ["a\r\n", "b\r\n", "\r\n", "c"])
        for winner in [ThreeWayMerge.Side.ours, .theirs] {
            let result = ThreeWayMerge.merge(base: "# Notes\r\n\r\nalpha\r\nbeta\r\ngamma\r\n",
                                             ours: "# Notes\r\n\r\nALPHA\r\nbeta\r\ngamma\r\n",
                                             theirs: "# Notes\r\n\r\nalpha\r\nbeta\r\nGAMMA\r\n", winner: winner)
            #expect(result == ThreeWayMerge.Result(text: "# Notes\r\n\r\nALPHA\r\nbeta\r\nGAMMA\r\n", conflicts: 0))
        }
    }

    /// Comment lines and a blank line inserted above a line the other side changed: the diff
    /// put the block right against that line, where the blank line already there could as well
    /// separate them — and every placement that separates them gives the same lines (rust-lang
    /// rfcs' allocator RFC, merged cleanly by git).
    @Test func aBlockInsertedAboveALineTheOtherSideChangedMergesWhenABlankLineSeparatesThem() {
        let base = "mod alloc {\n    // involve GC).\n\n    impl<Raw: RawAlloc> AllocInfo for Raw {\n        fn alloc() {}\n    }\n}\n"
        let ours = base.replacingOccurrences(of: "AllocInfo", with: "AllocCore")
        let theirs = base.replacingOccurrences(of: "\n\n    impl", with: "\n\n    // Notes on the direct implementation.\n    // * Raw allocators cannot allocate on the gc-heap.\n\n    impl")
        let merged = "mod alloc {\n    // involve GC).\n\n    // Notes on the direct implementation.\n    // * Raw allocators cannot allocate on the gc-heap.\n\n    impl<Raw: RawAlloc> AllocCore for Raw {\n        fn alloc() {}\n    }\n}\n"
        for winner in [ThreeWayMerge.Side.ours, .theirs] {
            #expect(ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, winner: winner) == ThreeWayMerge.Result(text: merged, conflicts: 0))
            #expect(ThreeWayMerge.merge(base: base, ours: theirs, theirs: ours, winner: winner) == ThreeWayMerge.Result(text: merged, conflicts: 0))
        }
    }

    /// Both sides made the same change to a line, and one also added lines after the blank line
    /// below it: the diff paired that blank line with the added one, so the two changes touched
    /// (swift-evolution's 0107-unsaferawpointer.md, merged cleanly by git).
    @Test func aChangeBothSidesMadeAlikeWithLinesAddedBelowItOnOneSideMerges() {
        let base = "A list of the members\nis shown below:\n\n```swift\nfunc load()\n```\n"
        let theirs = "A list of the members\nis shown below.\n\n```swift\nfunc load()\n```\n"
        let ours = "A list of the members\nis shown below.\n\nFor full doc comments, see the revision\n(at the link).\n\n```swift\nfunc load()\n```\n"
        for winner in [ThreeWayMerge.Side.ours, .theirs] {
            #expect(ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, winner: winner) == ThreeWayMerge.Result(text: ours, conflicts: 0))
            #expect(ThreeWayMerge.merge(base: base, ours: theirs, theirs: ours, winner: winner) == ThreeWayMerge.Result(text: ours, conflicts: 0))
        }
    }

    /// An "x" added next to the "x" the other side changed could go before or after it: the
    /// merge does not guess the order; a conflict, as before.
    @Test func anInsertionThatCouldGoBeforeOrAfterTheOtherSidesChangeStaysAConflict() {
        #expect(ThreeWayMerge.merge(base: "x\nx\n", ours: "x\nx\nx\n", theirs: "x\ny\n", winner: .ours).conflicts == 1)
        #expect(ThreeWayMerge.merge(base: "x\nx\n", ours: "x\ny\n", theirs: "x\nx\nx\n", winner: .ours).conflicts == 1)
    }

    /// One side adds a blank line where the other takes one out: opposite wishes for the same
    /// lines stay a conflict, although a placement exists where the two do not touch.
    @Test func aBlankLineAddedNextToABlankLineRemovedStaysAConflict() {
        #expect(ThreeWayMerge.merge(base: "title\n\n\nbody\n", ours: "title\n\n\n\nbody\n", theirs: "title\n\nbody\n", winner: .ours).conflicts == 1)
    }

    /// Changes of lines next to each other stay a conflict (no equal line can come between).
    @Test func changesOfAdjacentLinesStayAConflict() {
        #expect(ThreeWayMerge.merge(base: "a\nb\nc\nd\n", ours: "a\nB\nc\nd\n", theirs: "a\nb\nC\nd\n", winner: .ours).conflicts == 1)
        #expect(ThreeWayMerge.merge(base: "a\n\nb\n", ours: "a\n\nnew\nb\n", theirs: "a\n\nB\n", winner: .ours).conflicts == 1)
    }

    @Test func identicalConcurrentEditsAreNotAConflict() {
        let edited = Self.context + "- one more decision\n"
        #expect(ThreeWayMerge.merge(base: Self.context, ours: edited, theirs: edited, winner: .theirs) == .init(text: edited, conflicts: 0))
        let ours = edited.replacingOccurrences(of: "# Context", with: "# Our context")
        let merged = ThreeWayMerge.merge(base: Self.context, ours: ours, theirs: edited, winner: .theirs)
        #expect(merged.conflicts == 0 && merged.text == ours)
    }

    @Test(arguments: 1...60)
    func mergingWithAnUnchangedSideGivesTheOtherSideAndSidesAreSymmetric(seed: Int) {
        var random = SeededGenerator(state: UInt64(seed) &* 7919)
        func mutate(_ text: [String]) -> [String] {
            var lines = text
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0...lines.count, using: &random)
                if Bool.random(using: &random) || lines.isEmpty { lines.insert("new \(random.next() % 1000)\n", at: position) }
                else if position < lines.count { lines.remove(at: position) }
            }
            return lines
        }
        let base = (0..<20).map { "line \($0)\n" }
        let ours = mutate(base).joined(), theirs = mutate(base).joined(), baseText = base.joined()
        #expect(ThreeWayMerge.merge(base: baseText, ours: ours, theirs: baseText, winner: .theirs).text == ours)
        #expect(ThreeWayMerge.merge(base: baseText, ours: baseText, theirs: theirs, winner: .ours).text == theirs)
        let one = ThreeWayMerge.merge(base: baseText, ours: ours, theirs: theirs, winner: .ours)
        let other = ThreeWayMerge.merge(base: baseText, ours: theirs, theirs: ours, winner: .theirs)
        #expect(one == other, "seed \(seed): the same winner gives the same bytes from either side")
        if one.conflicts == 0 {
            // Every line either side added is in the result.
            for line in Set(LineDiff.lines(ours[...]) + LineDiff.lines(theirs[...])) where !base.contains(String(line)) {
                #expect(one.text.contains(line), "seed \(seed): lost \(line)")
            }
        }
    }
}

@Suite("Journals and chat transcripts merge as unions")
struct UnionMergeTests {
    @Test func bothSidesAppendingToTheSameDayKeepsEveryEntry() {
        let base = "# 2026-11-22\n- 09:00 started\n"
        let laptop = base + "- 10:00 laptop: read paper\n"
        let desktop = base + "- 10:05 desktop: wrote summary\n- 10:06 desktop: filed it\n"
        let merged = JournalMerge.merge(base: base, ours: laptop, oursReplica: "b-laptop", theirs: desktop, theirsReplica: "a-desktop")
        #expect(merged == base + "- 10:00 laptop: read paper\n- 10:05 desktop: wrote summary\n- 10:06 desktop: filed it\n", "by time")
        let mirrored = JournalMerge.merge(base: base, ours: desktop, oursReplica: "a-desktop", theirs: laptop, theirsReplica: "b-laptop")
        #expect(merged == mirrored, "every replica computes the same bytes")
    }

    @Test func journalEntriesInterleaveByTimeThenReplicaAndKeepTheirOwnOrder() {
        let base = "# 2026-11-22\n"
        let agent = base + "- 10:00:05 research: 6 messages\n  (with a note)\n- 10:20:00 chat: 4 messages\n"
        let person = base + "- 10:10 called Ada\nno time on this line\n- 9:55 forgot this earlier\n- 10:20:00 chat: same second\n"
        let merged = JournalMerge.merge(base: base, ours: agent, oursReplica: "b-server", theirs: person, theirsReplica: "a-laptop")
        #expect(merged == base + "- 10:00:05 research: 6 messages\n  (with a note)\n- 10:10 called Ada\nno time on this line\n"
                + "- 9:55 forgot this earlier\n- 10:20:00 chat: same second\n- 10:20:00 chat: 4 messages\n",
                "a side's own order is kept; equal times: the smaller replica first")
        #expect(merged == JournalMerge.merge(base: base, ours: person, oursReplica: "a-laptop", theirs: agent, theirsReplica: "b-server"))
        #expect(JournalMerge.leadingTime("- 2026-11-22T07:03:09Z fetched") == "2026-11-2207:03:09")
        #expect(JournalMerge.leadingTime("- 7:03 tea") == "07:03" && JournalMerge.leadingTime("- tea at 7:03") == nil)
    }

    @Test func aJournalEditThatIsNotAnAppendFallsBackToTheThreeWayMerge() {
        let base = "- one\n- two\n"
        #expect(JournalMerge.merge(base: base, ours: "- one (fixed)\n- two\n", oursReplica: "a", theirs: base + "- three\n", theirsReplica: "b") == nil)
        #expect(JournalMerge.merge(base: base, ours: base + "- same\n", oursReplica: "a", theirs: base + "- same\n", theirsReplica: "b") == base + "- same\n")
    }

    @Test func chatTranscriptsMergeByMessageIDInTimeOrder() throws {
        func transcript(_ messages: [(String, String, String)]) -> [UInt8] {
            let object: [String: Any] = ["title": "Llamas", "messages": messages.map { ["id": $0.0, "time": $0.1, "text": $0.2] }]
            return Array(try! JSONSerialization.data(withJSONObject: object))
        }
        let ours = transcript([("m1", "2026-11-22T10:00:00Z", "hi"), ("m3", "2026-11-22T10:02:00Z", "laptop reply")])
        let theirs = transcript([("m1", "2026-11-22T10:00:00Z", "hi"), ("m2", "2026-11-22T10:01:00Z", "desktop reply")])
        let merged = try #require(TranscriptMerge.merge(ours: ours, theirs: theirs, winner: .ours)?.bytes)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(merged)) as? [String: Any])
        let ids = (object["messages"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        #expect(ids == ["m1", "m2", "m3"])
        #expect(TranscriptMerge.merge(ours: theirs, theirs: ours, winner: .theirs)?.bytes == merged, "order-independent bytes")
        #expect(TranscriptMerge.merge(ours: Array("not json".utf8), theirs: theirs, winner: .ours) == nil)
    }

    @Test func aMessageEditedOnOneSideTakesTheEditAndOneEditedOnBothIsAConflict() throws {
        func transcript(_ messages: [(String, String)]) -> [UInt8] {
            let object: [String: Any] = ["messages": messages.map { ["id": $0.0, "time": "2026-11-22T10:00:00Z", "text": $0.1] }]
            return Array(try! JSONSerialization.data(withJSONObject: object))
        }
        func texts(_ bytes: [UInt8]) -> [String] {
            let object = try! JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
            return (object["messages"] as! [[String: Any]]).map { $0["text"] as! String }
        }
        let base = transcript([("m1", "hi"), ("m2", "tea?")])
        let oneSide = try #require(TranscriptMerge.merge(base: base, ours: base, theirs: transcript([("m1", "hi"), ("m2", "green tea?")]), winner: .ours))
        #expect(texts(oneSide.bytes) == ["hi", "green tea?"] && oneSide.conflicts == 0, "the only change wins even against the winner's old text")
        let both = try #require(TranscriptMerge.merge(base: base, ours: transcript([("m1", "hi"), ("m2", "black tea?")]),
                                                      theirs: transcript([("m1", "hi"), ("m2", "green tea?")]), winner: .ours))
        #expect(texts(both.bytes) == ["hi", "black tea?"] && both.conflicts == 1)
    }
}

@Suite("Merge kinds and conflict copy names")
struct ConflictNameTests {
    @Test(arguments: [
        ("context.md", MergeKind.text), ("Research/notes.txt", .text), ("Journal/user/2026-11-22.md", .journal),
        ("Journal/agent/2026-11-22.md", .journal), ("Chats/2026-11-22.json", .transcript), ("Chats/old/x.json", .json),
        ("Research/paper.pdf", .binary), ("relay.json", .json), ("AgentConfiguration.json", .json), ("photo.JPG", .binary),
        // Names with odd dots: the last non-empty part after a dot is the extension.
        ("notes/...", .binary), ("...", .binary), ("Journal/...", .journal), ("notes/draft.MD.", .text),
        ("notes/.md", .text), ("notes/archive.tar.gz", .binary), ("Journal", .journal), ("Journal/x.json", .json),
        ("Chats/a.JSON", .transcript), ("Chats", .binary), ("notes/é.md", .text), ("notes/x.MARKDOWN", .text),
        ("notes/x.Ｍd", .binary),
    ])
    func kindsByPath(path: String, kind: MergeKind) {
        #expect(MergeKind.of(path) == kind)
    }

    @Test func relayCopiesKeepTheExtensionLastAndPointBackToTheOriginal() {
        let date = Date(timeIntervalSince1970: 1_795_354_981)  // 2026-11-22 13:43:01 UTC
        let copy = ConflictNames.relayCopy(of: "Research/notes.md", replica: "ab12cd34ef56ab78", date: date)
        #expect(copy == "Research/notes.conflict-20261122-134301-ab12cd34ef56ab78.md")
        #expect(ConflictNames.original(of: copy) == "Research/notes.md")
        #expect(ConflictNames.relayCopy(of: "Makefile", replica: "r1", date: date) == "Makefile.conflict-20261122-134301-r1")
        #expect(ConflictNames.relayCopy(of: ".stignore", replica: "r1", date: date) == ".stignore.conflict-20261122-134301-r1")
        // No copies of copies: a copy of a copy is named after the original.
        #expect(ConflictNames.relayCopy(of: copy, replica: "r2", date: date) == "Research/notes.conflict-20261122-134301-r2.md")
    }

    @Test func syncthingConflictCopiesAreRecognised() {
        #expect(ConflictNames.original(of: "context.sync-conflict-20261122-101500-ABCDEF1.md") == "context.md")
        #expect(ConflictNames.isSyncthingCopy("Journal/user/2026-11-22.sync-conflict-20261122-101500-XYZ1234.md"))
        #expect(ConflictNames.original(of: "notes.conflict-of-interest.md") == nil)
        #expect(ConflictNames.original(of: "plain.md") == nil)
    }
}
