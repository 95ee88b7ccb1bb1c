import Foundation
@testable import RelayEngine
import RelayTestKit
import Testing
import WorkspaceCore

/// The pure building blocks the engine grounds a small model with: claims, sentences, chunks
/// and workspace retrieval (`swift test --filter GroundingPrimitivesTests` runs them all).
@Suite struct GroundingPrimitivesTests {}

extension GroundingPrimitivesTests {
    @Suite struct ClaimsTests {
        private func texts(_ claims: [Claim]) -> [String] { claims.map(\.text) }

        @Test func anInventedNumberAndNameAreUnsupported() {
            let sources = ["Oksana Pell runs the tea shop in Lisbon. A cup costs €3.50."]
            let output = "Oksana Pell runs the tea shop in Lisbon. A cup costs €3.50, and Marta Quist sells 4,200 cups a year."
            #expect(Claims.unsupported(in: output, sources: sources) == [
                Claim(kind: .name, text: "Marta Quist"), Claim(kind: .number, text: "4,200"),
            ])
            #expect(Claims.unsupported(in: "Oksana Pell runs it.", sources: sources).isEmpty)
        }

        @Test func numbersMatchAcrossThousandsSeparators() {
            #expect(Claims.unsupported(in: "It holds 4200 books.", sources: ["It holds 4,200 books."]).isEmpty)
            #expect(Claims.unsupported(in: "It holds 4,200 books.", sources: ["It holds 4200 books."]).isEmpty)
            #expect(Claims.unsupported(in: "It costs 1,234,567.50 in all.", sources: ["1234567.5"]).isEmpty)
            #expect(Claims.unsupported(in: "It weighs 4.20 kg.", sources: ["4.2 kg"]).isEmpty)
            #expect(Claims.unsupported(in: "A cup is €3.50 and 12% more.", sources: ["3.5 euros, up 12 percent"]).isEmpty)
            #expect(Claims.unsupported(in: "On the 21st floor.", sources: ["floor 21"]).isEmpty)
            #expect(Claims.unsupported(in: "It holds 4,300 books.", sources: ["It holds 4,200 books."]) == [Claim(kind: .number, text: "4,300")])
            #expect(Claims.unsupported(in: "It weighs 4.21 kg.", sources: ["4.2 kg"]) == [Claim(kind: .number, text: "4.21")])
        }

        @Test func eachWayOfWritingANumberIsOneClaim() {
            let claims = Claims.extract(from: "Costs: €3.50, $12, 12%, 3/4 of 4,200, version 4.2, the 1st and 21st, 2pm, 10-15 cups, 4,2 units.")
            #expect(texts(claims) == ["€3.50", "$12", "3/4", "4,200", "4.2", "1st", "21st", "2pm", "10", "15", "4"])
            #expect(claims.allSatisfy { $0.kind == .number })
        }

        @Test func listNumbersHeadingLevelsAndNumberWordsAreNotClaims() {
            let output = """
                ## 2. Plan

                1. Buy tea.
                2) Brew it for three minutes.
                - Drink twenty cups.
                ### 2024 in review
                """
            #expect(texts(Claims.extract(from: output)) == ["2024"])
        }

        @Test func digitsInAPathOrIdentifierTheSourcesHoldVerbatimAreSupported() {
            let sources = ["The summary is in Research/tea2/summary.md; run 20261122-ab12 wrote it, with llama v2.1.0."]
            let output = "See `Research/tea2/summary.md`, run 20261122-ab12 and llama v2.1.0."
            #expect(Claims.unsupported(in: output, sources: sources).isEmpty)
            #expect(Claims.unsupported(in: "See Research/tea3/summary.md for more.", sources: sources)
                    == [Claim(kind: .number, text: "Research/tea3/summary.md")])
            #expect(Claims.extract(from: "See Research/tea/summary.md and https://example.org/report.").isEmpty,
                    "no digits, nothing to check")
        }

        @Test func datesMatchAcrossFormats() {
            let forms = ["12 March 2024", "March 12, 2024", "2024-03-12", "12/03/2024", "12th of March 2024", "12.03.2024", "Mar 12, 2024"]
            for written in forms {
                let claims = Claims.extract(from: "It opened on \(written) in Lisbon.")
                #expect(claims.first == Claim(kind: .date, text: written), "\(written) is one date claim")
                for source in forms {
                    #expect(Claims.unsupported(in: "It opened on \(written).", sources: ["Opened \(source)."]).isEmpty,
                            "\(source) supports \(written)")
                }
            }
            #expect(Claims.unsupported(in: "It opened on 13 March 2024.", sources: ["Opened 2024-03-12."])
                    == [Claim(kind: .date, text: "13 March 2024")])
            // A slashed date read both ways: 03/12/2024 may be 3 December or 12 March.
            #expect(Claims.unsupported(in: "Due 03/12/2024.", sources: ["Due March 12, 2024."]).isEmpty)
        }

        @Test func aMonthIsSupportedByAnyDateOfThatMonthAndABareYearIsANumber() {
            let source = ["The audit ran on 2024-03-12."]
            #expect(Claims.extract(from: "In March 2024 it ran.") == [Claim(kind: .date, text: "March 2024")])
            #expect(Claims.unsupported(in: "In March 2024 it ran.", sources: source).isEmpty)
            #expect(Claims.unsupported(in: "In April 2024 it ran.", sources: source) == [Claim(kind: .date, text: "April 2024")])
            #expect(Claims.extract(from: "It ran in 2024.") == [Claim(kind: .number, text: "2024")])
            #expect(Claims.unsupported(in: "It ran in 2024.", sources: source).isEmpty)
            #expect(Claims.unsupported(in: "It ran in 2023.", sources: source) == [Claim(kind: .number, text: "2023")])
            #expect(Claims.unsupported(in: "It ran on 12 March.", sources: source).isEmpty, "a day without a year")
        }

        @Test func aSentenceInitialCommonWordIsNotAName() {
            let output = """
                The shop opens early. However, Pell closes it. Overall it works.
                - Sure: Lisbon is sunny.
                "Yesterday Pell left."
                **Key Findings:** Tea Room Notes From The Team.
                # Summary Of The Findings
                """
            #expect(texts(Claims.extract(from: output)) == ["Pell", "Lisbon"])
        }

        @Test func aMultiWordNameIsSupportedByItsWords() {
            let sources = ["Oksana Pell met the board."]
            #expect(Claims.unsupported(in: "Oksana Pell agreed.", sources: sources).isEmpty)
            #expect(Claims.unsupported(in: "Then Pell agreed.", sources: sources).isEmpty)
            #expect(Claims.unsupported(in: "Then Oksana agreed.", sources: sources).isEmpty)
            #expect(Claims.unsupported(in: "Then Oksana Smith agreed.", sources: sources) == [Claim(kind: .name, text: "Oksana Smith")])
            #expect(Claims.unsupported(in: "Then OKSANA pell agreed.", sources: ["oksana"]).isEmpty, "case does not matter")
            #expect(Claims.unsupported(in: "Then Oksana Pell agreed.", sources: ["Oksana\n  Pell"]).isEmpty)
        }

        @Test func namesWithJoinersHyphensApostrophesAndInitialsAreOneClaimEach() {
            let output = "They met Isabel de la Cruz at the Bank of Lisbon, then O'Hara in Saint-Étienne and J. R. Tolkien."
            #expect(texts(Claims.extract(from: output)) == ["Isabel de la Cruz", "Bank of Lisbon", "O'Hara", "Saint-Étienne", "J. R. Tolkien"])
            let sources = ["Isabel de la Cruz banked at the bank of Lisbon; O’Hara lives in Saint-Etienne; Tolkien wrote."]
            #expect(Claims.unsupported(in: output, sources: sources).isEmpty, "accents, apostrophes and initials aside")
            #expect(Claims.unsupported(in: "She went to Saint-Malo.", sources: sources) == [Claim(kind: .name, text: "Saint-Malo")])
        }

        @Test func aPossessiveMatchesTheBareName() {
            #expect(Claims.extract(from: "We read Pell's report and Pell’s notes.") == [Claim(kind: .name, text: "Pell")])
            #expect(Claims.unsupported(in: "We read Pell's report.", sources: ["Oksana Pell wrote it."]).isEmpty)
            #expect(Claims.unsupported(in: "We read Oksana Pell's report.", sources: ["Pell's report, by Oksana"]).isEmpty)
        }

        @Test func monthsWeekdaysCapitalMarkersAndIgnoredNamesAreNotNames() {
            let output = """
                On Tuesday, I asked Remy and Vera about June. APPROVED. OK, the PDF is fine.
                REVISION for Wren: add NASA.
                """
            #expect(texts(Claims.extract(from: output, ignoring: ["Remy", "Vera", "Wren"])) == ["NASA"])
            #expect(texts(Claims.extract(from: output)) == ["Remy", "Vera", "Wren", "NASA"])
            #expect(Claims.unsupported(in: "Ask Remy.", sources: [], ignoring: ["remy"]).isEmpty)
        }

        @Test func claimsAreInOrderOfFirstAppearanceAndDeduplicatedByValue() {
            let claims = Claims.extract(from: "Pell paid 4,200 on 2024-03-12. Pell paid 4200 again on 12 March 2024 in Lisbon.")
            #expect(claims == [Claim(kind: .name, text: "Pell"), Claim(kind: .number, text: "4,200"),
                               Claim(kind: .date, text: "2024-03-12"), Claim(kind: .name, text: "Lisbon")])
        }

        @Test func removingDropsOnlyTheSentencesWithUnsupportedClaims() {
            let output = """
                # Tea in Lisbon

                Oksana Pell runs the shop. It opened in 1998. A cup costs €3.50.

                - Pell buys from Marta Quist.
                - Cups are cheap. Marta Quist sells 4,200 a year.
                - Tea is green.

                ## Founded 1998

                | Year | Cups |
                |------|------|
                | 2023 | 900 |
                """
            let sources = ["Oksana Pell runs the tea shop in Lisbon. A cup costs €3.50. In 2023 it sold 900 cups."]
            let unsupported = Claims.unsupported(in: output, sources: sources)
            #expect(unsupported == [Claim(kind: .number, text: "1998"), Claim(kind: .name, text: "Marta Quist"), Claim(kind: .number, text: "4,200")])
            let (text, removed) = Claims.removing(unsupported, from: output)
            #expect(text == """
                # Tea in Lisbon

                Oksana Pell runs the shop. A cup costs €3.50.

                - Cups are cheap.
                - Tea is green.

                | Year | Cups |
                |------|------|
                | 2023 | 900 |
                """)
            #expect(removed == ["It opened in 1998.", "Pell buys from Marta Quist.", "Marta Quist sells 4,200 a year.", "Founded 1998"])
            #expect(Claims.unsupported(in: text, sources: sources).isEmpty)
        }

        @Test func removingAWholeParagraphTakesOneBlankLineAndMatchesAnyWritingOfTheValue() {
            let output = "Intro line.\n\nIt sold 4200 cups.\n\nThe end is near.\n"
            let (text, removed) = Claims.removing([Claim(kind: .number, text: "4,200")], from: output)
            #expect(text == "Intro line.\n\nThe end is near.\n")
            #expect(removed == ["It sold 4200 cups."])
            #expect(Claims.removing([Claim(kind: .name, text: "Smith")], from: output) == (output, []))
            #expect(Claims.removing([Claim(kind: .name, text: "Pell")], from: "Oksana Pell came.\nOthers stayed.\n").text == "Others stayed.\n",
                    "a name inside a longer one")
            #expect(Claims.removing([Claim(kind: .number, text: "42")], from: "- 42\n- forty-two\n").text == "- forty-two\n",
                    "a unit too short for split still goes")
        }

        /// Random Markdown-ish texts (seeded, so a failure repeats): whatever `unsupported`
        /// finds, `removing` takes it all out, and what is left holds none of it.
        @Test func removingLeavesNoneOfTheClaimsInRandomMarkdown() {
            let pieces = ["a", "Pell", " ", "\n", "\n\n", ".", "!", "?", "4", "2024", ",", "-", "/", ":", "#", "## ", "- ", "1. ",
                          "|", "`", "**", "\"", "'", "’s", "é", "🍵", "March", "12", "of", "de", "St.", "e.g.", "Dr.", "https://x.org/",
                          "(", ")", "[", "](", "<!--", "```", ">", "\r\n", "€", "%", "1st", "J.", "The", "\t", "—", "3/4", "Mar", " Oksana Smith "]
            var state: UInt64 = 17
            func next(_ bound: Int) -> Int {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Int((state >> 33) % UInt64(bound))
            }
            for _ in 0..<400 {
                let text = (0..<next(40)).map { _ in pieces[next(pieces.count)] }.joined()
                let unsupported = Claims.unsupported(in: text, sources: [String(text.prefix(10))])
                let (kept, _) = Claims.removing(unsupported, from: text)
                let left = Set(Claims.extract(from: kept).compactMap { ClaimValue(claim: $0)?.key })
                #expect(!unsupported.contains { ClaimValue(claim: $0).map { left.contains($0.key) } ?? true }, "\(text.debugDescription) → \(kept.debugDescription)")
            }
        }

        @Test func unsupportedChecksAgainstAHundredKilobytesOfSources() {
            var source = ""
            for index in 0..<1_300 {
                source += "Entry \(index): Oksana Pell paid €\(index),250.75 to the Bank of Lisbon on \(index % 28 + 1) March 2024.\n"
            }
            #expect(source.utf8.count > 100_000)
            let output = "Oksana Pell paid €1,199,250.75? No: €1,199,250.75 is wrong; she paid €1,250.75 on 28 March 2024 and 9 May 2024 to Marta."
            #expect(Claims.unsupported(in: output, sources: [source, "Who paid?"])
                    == [Claim(kind: .number, text: "€1,199,250.75"), Claim(kind: .date, text: "9 May 2024"), Claim(kind: .name, text: "Marta")])
        }
    }
}

extension GroundingPrimitivesTests {
    @Suite struct SentencesTests {
        @Test func decimalsAndAbbreviationsDoNotSplitSentences() {
            let text = """
                Dr. Pell paid 4.2 million, i.e. most of it, at 10 a.m. with Mr. J. R. Tolkien vs. the U.S. Army etc. in St. Paul. \
                See No. 5 at https://example.org/a.b?c=1 or summary.md. It rained! Did it? Yes. 2024 was dry.
                """
            #expect(Sentences.split(text) == [
                "Dr. Pell paid 4.2 million, i.e. most of it, at 10 a.m. with Mr. J. R. Tolkien vs. the U.S. Army etc. in St. Paul.",
                "See No. 5 at https://example.org/a.b?c=1 or summary.md.",
                "It rained!", "Did it?", "Yes.", "2024 was dry.",
            ])
            #expect(Sentences.split("It ends here. and goes on. \"Quoted.\" (Bracketed.) Next.") == [
                "It ends here. and goes on.", "\"Quoted.\"", "(Bracketed.)", "Next.",
            ])
        }

        @Test func markdownHeadingsListItemsRowsAndParagraphsEndUnits() {
            let text = """
                # Tea notes
                A paragraph that
                wraps over lines. Second one
                - item one
                - item two. Its second sentence.
                  continued here
                1. numbered
                > quoted text

                | a | b |
                |---|---|
                ---
                ok
                ```
                code line
                ```
                <!-- relay:turn 1 -->
                Last paragraph
                """
            #expect(Sentences.split(text) == [
                "Tea notes", "A paragraph that\nwraps over lines.", "Second one", "item one", "item two.",
                "Its second sentence.\n  continued here", "numbered", "quoted text", "| a | b |", "code line", "Last paragraph",
            ])
        }
    }
}

extension GroundingPrimitivesTests {
    @Suite struct ChunkerTests {
        @Test func chunksOfAFiveWindowDocumentCoverItExactly() {
            var paragraphs: [String] = []
            for index in 0..<40 {
                paragraphs.append("## Part \(index)\n\nOksana Pell wrote part \(index) — naïve café notes 🍵. It has 4.2 ideas, e.g. tea. Next comes more text about Lisbon.")
            }
            let text = paragraphs.joined(separator: "\n\n") + "\n"
            let window = FocusedPrompt.estimate(text) / 5 + 1
            let chunks = Chunker.chunks(of: text, maxTokens: window)
            #expect(chunks.joined() == text, "nothing lost, nothing duplicated")
            #expect(chunks.count >= 5 && chunks.count <= 7)
            #expect(chunks.allSatisfy { FocusedPrompt.estimate($0) <= window })
            #expect(chunks.dropLast().allSatisfy { $0.hasSuffix("\n\n") }, "each cut at a paragraph")
            #expect(chunks.allSatisfy { !$0.isEmpty })
        }

        @Test func aTextThatFitsIsOneChunk() {
            #expect(Chunker.chunks(of: "Short text.", maxTokens: 100) == ["Short text."])
            #expect(Chunker.chunks(of: "", maxTokens: 10) == [""])
            #expect(Chunker.chunks(of: "One.\n\nTwo.", maxTokens: 3) == ["One.\n\n", "Two."])
        }

        @Test func withoutParagraphsChunksEndAtSentencesThenWords() {
            let sentences = (0..<30).map { "Sentence number \($0) is here." }.joined(separator: " ")
            let bySentence = Chunker.chunks(of: sentences, maxTokens: 40)
            #expect(bySentence.joined() == sentences)
            #expect(bySentence.count > 1)
            #expect(bySentence.dropLast().allSatisfy { $0.hasSuffix("here. ") })
            #expect(bySentence.allSatisfy { FocusedPrompt.estimate($0) <= 40 })

            let words = (0..<200).map { "word\($0)" }.joined(separator: " ")
            let byWord = Chunker.chunks(of: words, maxTokens: 30)
            #expect(byWord.joined() == words)
            #expect(byWord.dropLast().allSatisfy { $0.hasSuffix(" ") })
            #expect(byWord.allSatisfy { FocusedPrompt.estimate($0) <= 30 })
        }

        @Test func aLongWordIsCutBetweenCharactersNeverInsideOne() {
            let word = String(repeating: "é🍵a", count: 50)
            let chunks = Chunker.chunks(of: word, maxTokens: 3)
            #expect(chunks.joined() == word)
            #expect(chunks.allSatisfy { FocusedPrompt.estimate($0) <= 3 && !$0.isEmpty })
            // One character wider than the window still makes a chunk of its own.
            #expect(Chunker.chunks(of: "🍵🍵", maxTokens: 1) == ["🍵", "🍵"])
        }
    }
}

extension GroundingPrimitivesTests {
    @Suite struct WorkspaceSearchTests {
        private func scratch(_ files: [String: String]) throws -> ScratchWorkspace {
            let scratch = try ScratchWorkspace.forRelays()
            for (path, text) in files { try scratch.write(path, text) }
            return scratch
        }

        @Test func theLineThatAnswersAOneFactQuestionRanksFirstWithItsPathAndLine() throws {
            let scratch = try scratch([
                "Journal/user/2026-11-20.md": "# Friday\n\nBought oolong tea.\nThe tea shop on Rua Augusta opens at 9:30.\nRain all day.\n",
                "Research/tea/summary.md": "# Tea\n\nGreen tea has less caffeine than black tea.\nShops sell tea by weight.\n",
                "context.md": "# Context\n\nThe team keeps llamas.\n",
            ])
            let hits = WorkspaceSearch(workspace: scratch.workspace).lines(matching: "When does the tea shop open?")
            let first = try #require(hits.first)
            #expect(first.path == "Journal/user/2026-11-20.md")
            #expect(first.line == 4)
            #expect(first.text == "The tea shop on Rua Augusta opens at 9:30.")
            #expect(first.score > 0)
            #expect(hits.allSatisfy { $0.score > 0 })
            #expect(!hits.contains { $0.text.contains("llamas") || $0.text == "Rain all day." })
            #expect(hits.map(\.score) == hits.map(\.score).sorted(by: >))
        }

        @Test func aLineUnderAMatchingHeadingAnswersAQuestionItsWordsDoNotHold() throws {
            let scratch = try scratch([
                "context.md": "# Context\n\n## Cats\n\nMiso is grey and eleven.\n\n## Dogs\n\nRex is loud.\n",
            ])
            let hits = WorkspaceSearch(workspace: scratch.workspace).lines(matching: "what is the cat called")
            #expect(hits.map(\.text) == ["Miso is grey and eleven."])
            #expect(hits.first?.line == 5)
        }

        @Test func chatMessagesRankBelowNotesForTheSameWordsAndAgentsAnswersAreNotSearched() throws {
            let scratch = try scratch([
                "Chats/tea.md": "The tea shop is on Rua Augusta, I think.\n\n<!-- relay:turn r1 -->\n### 🔎 Remy · researcher\n\nThe tea shop is on Rua Augusta.\n<!-- relay:end r1 · write your next message below this line -->\n",
                "Journal/user/2026-11-20.md": "The tea shop is on Rua Augusta.\n",
            ])
            let hits = WorkspaceSearch(workspace: scratch.workspace).lines(matching: "tea shop Rua Augusta")
            #expect(hits.count == 2, "the note and the person's message, not the agent's answer: \(hits)")
            #expect(hits.first?.path == "Journal/user/2026-11-20.md")
            let note = try #require(hits.first), chat = try #require(hits.first { $0.path == "Chats/tea.md" })
            #expect(chat.line == 1)
            #expect(chat.score < note.score)
        }

        @Test func readmesAndTurnMarkersAreNotSearched() throws {
            var large = ""
            while large.utf8.count <= 256 * 1024 { large += "zebra in a very large file of notes\n" }
            let scratch = try scratch([
                "README.md": "zebra\n",
                "Research/README.md": "zebra\n",
                "Research/.hidden/notes.md": "zebra\n",
                "Research/.notes.md": "zebra\n",
                "Chats/zoo.json": "{\"zebra\": 1}\n",
                "Chats/old/zoo.md": "zebra\n",
                "Chats/zoo.md": "<!-- relay:turn zebra -->\n<!-- relay:end zebra -->\n",
                "Research/photo.png": "zebra\n",
                "Research/big.txt": large,
                "Research/skip.md": "zebra skipped by the caller\n",
                "notes.md": "zebra at the root, outside the corpus\n",
                "Journal/user/binary.md": "zebra\u{0}\n",
                "Journal/user/2026-11-20.md": "# zebra\n\n---\n| zebra |\n",
            ])
            try FileManager.default.createDirectory(atPath: scratch.workspace.root + "/.relay/runs/x", withIntermediateDirectories: true)
            try "zebra\n".write(toFile: scratch.workspace.root + "/.relay/runs/x/journal.md", atomically: false, encoding: .utf8)
            let search = WorkspaceSearch(workspace: scratch.workspace)
            #expect(search.lines(matching: "zebra", excluding: ["Research/skip.md"]).map { "\($0.path):\($0.line)" } == ["Journal/user/2026-11-20.md:4"],
                    "only the table row; the heading counts for it but is not returned")
            #expect(search.lines(matching: "zebra").map(\.path).contains("Research/skip.md"))
        }

        @Test func theStemmerMeetsPluralsAndVerbFormsAndStopwordsAreDropped() {
            let pairs = [("cats", "cat"), ("called", "call"), ("named", "name"), ("puppies", "puppy"), ("boxes", "box"),
                         ("running", "run"), ("glasses", "glass"), ("houses", "house"), ("notes", "note"), ("matches", "match"),
                         ("stopped", "stop"), ("speeding", "speed"), ("needed", "need"), ("strings", "string"), ("making", "make"),
                         ("opens", "open"), ("opening", "open"), ("opened", "open")]
            for (word, base) in pairs {
                #expect(SearchTerms.stem(word) == SearchTerms.stem(base), "\(word) ~ \(base)")
            }
            for word in ["glass", "bus", "status", "analysis", "thing", "speed", "red", "tea"] {
                #expect(SearchTerms.stem(word) == word, "\(word) is kept")
            }
            #expect(SearchTerms.terms(of: "What is the cat called? Please tell me, who knows!") == ["cat", "call"])
            #expect(SearchTerms.terms(of: "It costs 4,200.50 or 4.2 (Pell's)") == ["cost", "4200.50", "4.2", "pell"])
        }

        @Test func aQueryOfOnlyStopwordsFindsNothing() throws {
            let scratch = try scratch(["Journal/user/a.md": "What is it and who is where?\n"])
            let search = WorkspaceSearch(workspace: scratch.workspace)
            #expect(search.lines(matching: "what is it?").isEmpty)
            #expect(search.lines(matching: "walrus").isEmpty)
            #expect(search.lines(matching: "where", limit: 0).isEmpty)
        }

        @Test func aSearchOfThreeHundredFilesFindsTheOneFactDeterministically() throws {
            var files: [String: String] = [:]
            for index in 0..<300 {
                let folder = ["Journal/user", "Research/topic\(index % 7)", "Chats"][index % 3]
                files["\(folder)/note\(index).md"] = (0..<20).map { "Line \($0) of note \(index) about tea, weather and llamas." }.joined(separator: "\n")
            }
            files["Research/topic3/ferry.md"] = "# Ferries\n\nThe Cacilhas ferry leaves every 20 minutes.\n"
            let scratch = try scratch(files)
            let search = WorkspaceSearch(workspace: scratch.workspace)
            let hits = search.lines(matching: "How often does the Cacilhas ferry leave?", limit: 3)
            #expect(hits.first == RetrievedLine(path: "Research/topic3/ferry.md", line: 3,
                                               text: "The Cacilhas ferry leaves every 20 minutes.", score: hits.first?.score ?? 0))
            #expect(hits.count == 1)
            let tea = search.lines(matching: "tea weather", limit: 5)
            #expect(tea.count == 5)
            #expect(tea == search.lines(matching: "tea weather", limit: 5), "the same answer every time")
            #expect(tea.map(\.path) == tea.map(\.path).sorted(), "equal scores in path order")
            #expect(!tea.contains { $0.path.hasPrefix("Chats/") }, "chat lines count half")
        }
    }
}
