import Foundation
import WorkspaceCore

extension RelayRunner {
    /// The evidence for the request: the workspace lines that best match it (and, for a
    /// follow-up, the previous message), or — when its kind says where to look — the lines the
    /// workspace's structure gives (the open tasks, the notes of the days asked about, every row
    /// of a table), with a second search for a name the first lines bring in (two hops). As many
    /// as the roster's most retrieving agent takes (more for a list, a summary, a comparison);
    /// nil when none retrieves. Read once, at the start, so resume and replay see the same lines.
    func retrieve(for manifest: RunManifest) -> [RetrievedLine]? {
        // A CSV is read as its Markdown table, whose rule line the file does not have: a row is
        // cited by its line in the file.
        retrieveLines(for: manifest)?.map { line in
            var line = line
            if CSVTable.isTable(line.path), line.line > 2 { line.line -= 1 }
            return line
        }
    }

    private func retrieveLines(for manifest: RunManifest) -> [RetrievedLine]? {
        let count = manifest.roster.compactMap(\.retrieve).max() ?? 0
        guard count > 0, !manifest.skipped else { return nil }
        let analysis = manifest.analysis
        let evidence = Evidence(workspace: workspace)
        let topic = Support.topicTerms(of: manifest.requestLead)
        switch analysis?.kind {
        case .list? where analysis?.tasks == true && evidence.document(namedBy: topic) == nil:
            // The person's own tasks — not "who agreed to do what at the meeting", which names a
            // document: that is the document's section, below.
            let tasks = evidence.openTasks(in: analysis?.days)
            if !tasks.isEmpty { return Array(tasks.prefix(Self.mostEvidence)) }
        case .list?:
            // "Who came to the committee meeting?": the attendance lines of the minutes named.
            if RequestRules.asksWhoCame(manifest.requestLead),
               let document = evidence.document(namedBy: Support.topicTerms(of: manifest.requestLead)) {
                let present = evidence.attendance(in: document)
                if !present.isEmpty { return present }
            }
            // "What's new in 3.2?", "the action items from the minutes": the section named ("who
            // is doing what" names the action items).
            let asked = Support.topicTerms(of: manifest.requestLead).union(RequestRules.asksWhoDoesWhat(manifest.requestLead) ? ["action"] : [])
            let section = evidence.section(namedBy: asked, limit: Self.mostEvidence)
            if section.count >= 2 { return section }
            // "What did I get at the hardware shop?": the rows of the table of the document named (an invoice).
            if let document = evidence.document(namedBy: Support.topicTerms(of: manifest.requestLead)),
               let table = evidence.tables(in: document).max(by: { $0.count < $1.count }) {
                return Array(table.prefix(Self.mostEvidence))
            }
        case .summarise?:
            // "What did the committee decide on the 12th?": a document the request names (the
            // minutes of the 12th) before the person's notes of that day — unless the request is
            // about the person's own days ("what did I do on the 12th?").
            if analysis?.days != nil, !RequestRules.isPersonal(manifest.requestLead),
               let document = evidence.document(namedBy: Support.topicTerms(of: manifest.requestLead).subtracting(RequestRules.summaryTerms)) {
                let lines = evidence.summaryLines(of: document, limit: analysis?.count ?? Self.documentSummaryLines)
                if !lines.isEmpty { return lines }
            }
            if let days = analysis?.days {
                let lines = evidence.noteLines(in: days)
                if !lines.isEmpty { return Array(lines.prefix(Self.mostEvidence)) }
            } else if let document = evidence.document(namedBy: Support.topicTerms(of: manifest.requestLead).subtracting(RequestRules.summaryTerms)) {
                // "Sum up the lease": the document's summary, not lines that share a word with it.
                let lines = evidence.summaryLines(of: document, limit: analysis?.count ?? Self.documentSummaryLines)
                if !lines.isEmpty { return lines }
            }
        default:
            break
        }
        // A follow-up is read with the previous question and the value its answer gave, both
        // weighing less than its own words: "it" in "When does it close?" after "Which bank is
        // the account with?" — "Kestrel Bank" is the bank; after "Which company makes the
        // kettle?" — "How much does it cost?", the kettle is. Both are there; the lines decide.
        let previous = manifest.previousExchange.map { exchange in
            [exchange.message, RunExecutor.renderedAnswer(exchange.answer.split(separator: "\n").first.map(String.init) ?? "")?.value]
                .compactMap { $0 }.joined(separator: " ")
        }
        let ignoring = Set(manifest.roster.flatMap { [$0.name, $0.id] } + ["Relay"])
        // "What is his email address?": the person is the one the previous answer named.
        var query = manifest.searchQuery(ignoring: ignoring)
        if analysis?.kind == .yesNo {
            // "Have I paid the shop yet?": "yet" asks how things stand; a line that says "not yet"
            // of something else is no evidence.
            query = query.split(separator: " ").filter { word in
                !RunExecutor.stillWords.contains(word.lowercased().trimmingCharacters(in: .punctuationCharacters))
            }.joined(separator: " ")
        }
        // The chat itself is not searched: its last exchange is given whole, the rest is old answers.
        let excluded: Set<String> = manifest.chatFile.isEmpty ? [] : [manifest.chatFile]
        let wide = [.list, .summarise, .compare, .compute].contains(analysis?.kind)
        let keep = wide ? max(count, Self.mostEvidence / 2) : count
        // More lines than are kept, so the ones that hold the answer can rise above the ones that
        // only name what the question is about (AnswerEvidence).
        // A comparison of prices is about every line that speaks of a price, in any of its words:
        // "which timber yard is cheaper?" is answered by "Brackley charges 34.75 euros". Those words
        // weigh as a previous message's do, less than the request's own.
        let asksPrice = analysis?.kind == .compare && !Set(SearchTerms.terms(of: query)).isDisjoint(with: RunExecutor.moneyWords)
        let found = WorkspaceSearch(workspace: workspace).lines(matching: query, context: previous ?? (asksPrice ? RunExecutor.moneyWordsText : nil),
                                                                limit: keep * Self.retrievalPool, excluding: excluded)
        let widened = self.widened(found, evidence: evidence)
        // A yes/no question asks for no value: the line that decides it holds none as often as not
        // ("[x] paid the invoice"), so lines are not ranked by the values they hold.
        let judge = AnswerEvidence(question: query, previous: previous, ignoring: ignoring,
                                   asked: analysis?.kind == .yesNo ? .any : analysis?.value?.asked)
        var ranked = judge.rerank(widened, keep: keep)
        if analysis?.kind == .compare {
            // A comparison is over the things the best line is one of: every row of its table,
            // every item of its list of quantities (an ingredients list). The best line is the
            // search's best that holds a value to compare (the reranking is for one value: it
            // favours lines with the question's own words, "most", over the list of amounts); a
            // line that only names the topic does not decide.
            // The engine's own records (its journal, the chats) hold counts of messages, not things
            // to compare.
            let holding = widened.filter { line in
                WorkspaceSearch.weight(of: line.path) == 1 && Claims.extract(from: line.text).contains { $0.kind == .number || $0.kind == .date }
            }
            // Among the best few, a line that holds two prices compares them itself ("Holm Timber
            // ask 38.50 euros; Brackley charges 34.75 euros"), as does one with two amounts in one
            // unit for other questions ("hive 2 gave 9 kg and hive 4 gave 13 kg").
            let comparing = holding.prefix(asksPrice ? 8 : 3).first { line in
                let amounts = RunExecutor.comparable(RunExecutor.amounts(in: [.init(text: line.text, source: nil)]))
                return amounts.count >= 2 && (!asksPrice || amounts.allSatisfy(\.isMoney))
                    || (!asksPrice && RunExecutor.labelledNumbers(in: line.text).count >= 2)
            }
            // The first of the best three that is one of several (a row, an item of a list of
            // amounts) decides: "Makes one loaf of 900 g" above the ingredients does not.
            var rows: [RetrievedLine] = [], items: [RetrievedLine] = []
            // "The dearest thing on the invoice": the longest table of the document the request
            // names, whatever lines share its words.
            let compared = Support.topicTerms(of: manifest.requestLead).subtracting(RunExecutor.moneyWords)
                .subtracting(SearchTerms.terms(of: RequestRules.compareWords.map(\.phrase).joined(separator: " ")))
            if let document = evidence.document(namedBy: compared) {
                if let table = evidence.tables(in: document).max(by: { $0.count < $1.count }) {
                    rows = table
                } else if [.earliest, .latest].contains(analysis?.operation), case let headings = evidence.datedHeadings(in: document), headings.count >= 2 {
                    // "The newest release": release notes' headings, "## 4.3 (12 October 2026)".
                    items = headings
                }
            }
            for best in holding.prefix(3) where rows.isEmpty && items.isEmpty {
                rows = evidence.tableRows(around: best)
                items = rows.count >= 2 ? [] : evidence.quantityItems(around: best)
                if rows.count < 2 { rows = [] }
                if items.count < 2 { items = [] }
            }
            if rows.isEmpty, items.isEmpty, asksPrice {
                // "Lamp options, from Hanne-Lis:" and the priced items under it.
                for line in widened.prefix(6) where items.isEmpty && WorkspaceSearch.weight(of: line.path) == 1 {
                    items = evidence.pricedItems(around: line)
                }
            }
            if !rows.isEmpty {
                // A table's rows are compared by the column the request names; other lines follow.
                ranked = rows + ranked.filter { line in !rows.contains { $0.path == line.path && $0.line == line.line } }
            } else if !items.isEmpty {
                // A list of amounts is compared among its items only.
                ranked = items
            } else if let comparing {
                ranked = [comparing] + ranked.filter { $0 != comparing }
            }
        }
        if analysis?.kind == .lookup, let value = analysis?.value, value.isSpan || value == .time {
            // An email address, a phone number, a time of day ("What time does it start?" — not
            // the date of the line that names it most): the lines about the question's subject
            // that hold one come first.
            let topic = Support.topicTerms(of: query)
            // From the whole pool searched, not only the lines kept: a long line of context.md
            // with the address ranks below short notes that merely name the person.
            let holding = widened.filter { line in
                !ValueSpans.find(value, in: line.text).isEmpty
                    && (topic.isEmpty || Support.coverage(of: topic, in: value == .time ? Support.withItsNames(line.text, path: line.path) : line.text) > 0)
            }
            ranked = Array((holding + ranked.filter { line in !holding.contains(line) }).prefix(max(keep, min(holding.count, keep + 2))))
        }
        if let analysis, analysis.kind == .compute, analysis.operation == .sum, RequestRules.operandParts(query).count < 2 {
            // "How much did I take at the markets in June altogether?": a column of a table's
            // rows — those of the days asked about, when the rows are dated.
            let today = RelayRunner.today(manifest.localDate)
            if let row = widened.prefix(10).first(where: { !$0.path.hasSuffix("/summary.md") && !evidence.tableRows(around: $0).isEmpty }) {
                var rows = evidence.tableRows(around: row)
                if let days = analysis.days {
                    let dated = rows.filter { line in Claims.extract(from: line.text).contains { $0.kind == .date && DayWords.parse($0.text, today: today) != nil } }
                    if dated.count == rows.count {
                        rows = rows.filter { line in
                            Claims.extract(from: line.text).contains { claim in
                                claim.kind == .date && (DayWords.parse(claim.text, today: today).map { days.contains(DayWords.string($0)) } ?? false)
                            }
                        }
                    }
                }
                // "Gaffer tape" names rows: those that hold the most of the words that are not the
                // table's headers or the days.
                let headers = Set(rows.flatMap { line in RunExecutor.cells(of: line.text)?.flatMap { SearchTerms.terms(of: $0.header) } ?? [] })
                let named = topic.subtracting(headers).subtracting(SearchTerms.terms(of: (analysis.days?.said ?? "") + " " + DayWords.months.joined(separator: " ")))
                    .subtracting(SearchTerms.terms(of: "spend spent cost costs pay paid take took much many total altogether"))
                let shares = rows.map { Support.coverage(of: named, in: $0.text) }
                if !named.isEmpty, let most = shares.max(), most > 0 { rows = rows.indices.filter { shares[$0] == most }.map { rows[$0] } }
                if !rows.isEmpty { ranked = rows + ranked.filter { line in !rows.contains { $0.path == line.path && $0.line == line.line } } }
            }
        }
        if analysis?.kind == .lookup, let counted = RequestRules.countedThing(query),
           let row = widened.prefix(10).first(where: { !$0.path.hasSuffix("/summary.md") && evidence.tableRows(around: $0).count >= 2 }) {
            // "How many market days have I done so far?": the rows of the table of market days,
            // when its file name, its heading or its header names what is counted — those of
            // the days asked about, or up to today for "so far".
            var rows = evidence.tableRows(around: row)
            let headers = rows.first.flatMap { RunExecutor.cells(of: $0.text)?.map(\.header) } ?? []
            let named = Set(SearchTerms.terms(of: row.path.replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "_", with: " ")
                + " " + (row.heading ?? "") + " " + headers.joined(separator: " ").replacingOccurrences(of: "_", with: " ")))
            if !counted.isDisjoint(with: named) {
                let today = RelayRunner.today(manifest.localDate)
                let words = " " + RequestRules.words(of: query).joined(separator: " ") + " "
                func day(of line: RetrievedLine) -> Date? {
                    Claims.extract(from: line.text).lazy.compactMap { $0.kind == .date ? DayWords.parse($0.text, today: today) : nil }.first
                }
                if rows.allSatisfy({ day(of: $0) != nil }) {
                    if let days = analysis?.days {
                        rows = rows.filter { days.contains(DayWords.string(day(of: $0)!)) }
                    } else if [" so far ", " to date ", " until now ", " done ", " yet "].contains(where: words.contains), let now = DayWords.date(today) {
                        rows = rows.filter { day(of: $0)! <= now }
                    }
                }
                ranked = rows + ranked.filter { line in !rows.contains { $0.path == line.path && $0.line == line.line } }
            }
        }
        if let analysis, analysis.kind == .compute, [.sum, .difference, .daysBetween].contains(analysis.operation) {
            ranked = operandLines(ranked, question: query, dates: analysis.operation == .daysBetween, excluded: excluded, evidence: evidence)
        }
        if analysis?.kind == .lookup, !Set(RequestRules.words(of: query)).isDisjoint(with: ["now", "currently", "nowadays", "anymore"]) {
            // "What am I paying for the extractor now?": of the person's dated notes about it that
            // hold a value of the kind asked, the newest says how it stands now (the price was
            // lowered since the quote).
            let topic = Support.topicTerms(of: query).subtracting(["now", "currently"])
            // A note that moved it may name it by one word ("rang the test centre and moved it to
            // Friday 6 October"): the notes that speak of a change are searched for too.
            let changes = WorkspaceSearch(workspace: workspace).lines(matching: query + " " + Self.changeQueryWords, limit: keep * Self.retrievalPool, excluding: excluded)
                .filter { Evidence.day(ofNotePath: $0.path) != nil && AnswerEvidence.changeWords.contains(where: $0.text.lowercased().contains) }
            let best = Array(ranked.prefix(8))
            let moved: [RetrievedLine] = self.widened(changes, evidence: evidence).filter { line in !best.contains { $0.path == line.path && $0.line == line.line } }
            let pool: [RetrievedLine] = best + moved
            let dated = pool.filter { line in
                Evidence.day(ofNotePath: line.path) != nil && Support.coverage(of: topic, in: line.text) > 0
                    && judge.evidence(of: line.text, weights: [:]).fits
            }
            if let newest = dated.max(by: { Evidence.day(ofNotePath: $0.path)! < Evidence.day(ofNotePath: $1.path)! }), dated.count >= 2 {
                ranked = [newest] + ranked.filter { $0 != newest }
            }
        }
        if let analysis, analysis.kind == .lookup, let value = analysis.value, value.isSpan || value == .place,
           let described = RequestRules.describedPerson(in: query),
           let hopped = describedHop(described, value: value, question: query, ignoring: ignoring, excluded: excluded, evidence: evidence) {
            // "The phone number of whoever is borrowing my extractor": the line that describes the
            // person, then the line with their number.
            ranked = hopped + ranked.filter { line in !hopped.contains { $0.path == line.path && $0.line == line.line } }
        } else if let analysis, let value = analysis.value, [.lookup, .yesNo].contains(analysis.kind) {
            ranked = secondHop(ranked, value: value, question: query, ignoring: ignoring, excluded: excluded, evidence: evidence)
        }
        if analysis?.kind == .list, analysis?.tasks != true {
            // "What must every stallholder bring?": when one of the best lines introduces a list
            // with a colon ("Every stallholder must bring:"), or is one of its items, the list's items are
            // the answer, not the lines that share the request's words.
            let items = evidence.introducedItems(around: Array(ranked.prefix(3)))
            if !items.isEmpty { ranked = items }
        }
        // "When is Tam's grade 3 exam?": a line about grade 2 alone is about another exam (with no
        // line about grade 3 they stay, for the answer to say so: `unsupported`).
        for (noun, number) in RequestRules.numberedThings(manifest.requestLead)
        where ranked.contains(where: { RequestRules.numbering(of: noun, number, in: $0.text).this }) {
            ranked = ranked.filter { !RequestRules.numbering(of: noun, number, in: $0.text).other }
        }
        return ranked
    }

    /// Notes in the request's analysis the words of its topic no searched file holds.
    func noteUnknownWords(in manifest: inout RunManifest) {
        guard manifest.analysis != nil, manifest.document == nil, manifest.retrieved != nil else { return }
        let topic = Support.topicTerms(of: manifest.searchQuery(ignoring: Set(manifest.roster.flatMap { [$0.name, $0.id] } + ["Relay"])))
        let excluded: Set<String> = manifest.chatFile.isEmpty ? [] : [manifest.chatFile]
        let unknown = WorkspaceSearch(workspace: workspace).unknownTerms(topic, excluding: excluded)
        manifest.analysis?.unknown = unknown.isEmpty ? nil : unknown.sorted()
    }

    /// Words of a note that moves a thing, searched beside a question of how it stands now.
    static let changeQueryWords = "moved rescheduled postponed changed instead put back brought forward"

    /// The most lines of evidence a run keeps (a week of notes, a to-do list, a table).
    static let mostEvidence = 16
    /// The bullets of a document's summary when the request does not say how many: about one
    /// for each of a document's parts.
    static let documentSummaryLines = 8

    /// Lines as evidence: a table row with its header, a hard-wrapped line as its sentences.
    private func widened(_ found: [RetrievedLine], evidence: Evidence) -> [RetrievedLine] {
        var files: [String: [String]] = [:]
        return found.map { line in
            var line = line
            if files[line.path] == nil { files[line.path] = evidence.lines(of: line.path) }
            let lines = files[line.path] ?? []
            line.text = Evidence.tableRow(at: line.line - 1, in: lines) ?? Self.listItem(around: line.line, in: lines)
                ?? Self.sentences(around: line.line, in: lines) ?? line.text
            line.heading = Evidence.heading(above: line.line - 1, in: lines)
            if lines.indices.contains(line.line - 1), DocumentShape.isQuoted(lines, at: line.line - 1) { line.quoted = true }
            return line
        }
    }

    /// Two hops for a person described, not named ("whoever is borrowing my extractor in July",
    /// "the new beekeeper I'm mentoring"): the workspace is searched for the description alone
    /// (without the words of the detail asked), and the lines that cover at least half of it —
    /// the person's own notes first when the description speaks of them ("my", "I'm") — are
    /// tried in turn: one that holds the detail itself answers; else each name it brings in is
    /// searched for with the detail's words, and the first that leads to a line holding the
    /// detail gives both lines. Nil when no line leads anywhere.
    private func describedHop(_ described: Set<String>, value: ValueKind, question: String, ignoring: Set<String>, excluded: Set<String>,
                              evidence: Evidence) -> [RetrievedLine]? {
        func holds(_ line: RetrievedLine) -> Bool {
            value.isSpan ? !ValueSpans.find(value, in: line.text).isEmpty : !ValueSpans.find(.address, in: line.text).isEmpty
        }
        let search = WorkspaceSearch(workspace: workspace)
        let own = !Set(RequestRules.words(of: question)).isDisjoint(with: RequestRules.firstPerson)
        // What the person did, not what they are ("woman", "person") nor a verb of any sentence
        // ("took" of "took the minutes"): a line that describes them seldom says those.
        let described = described.subtracting(SearchTerms.terms(of: RequestRules.personNouns.joined(separator: " "))).subtracting(Support.askingWords)
        guard !described.isEmpty else { return nil }
        // The person's own words only: the engine's journal and the chats hold the questions
        // asked before, which share every word of the description.
        let pool = widened(search.lines(matching: described.sorted().joined(separator: " "), limit: 40, excluding: excluded), evidence: evidence)
            .filter { WorkspaceSearch.weight(of: $0.path) == 1 && !$0.path.hasPrefix("Chats/") }
        // A word no line holds ("sewing" where the notes say "making") tells no line from
        // another and is left out — unless more than half the description is in no line: then
        // the notes describe no one so.
        let termsOf = pool.map { Set(SearchTerms.terms(of: $0.withHeading)) }
        let found = described.filter { term in termsOf.contains { $0.contains(term) } }
        guard found.count * 2 >= described.count else { return nil }
        // A word of the description most lines found hold ("new") says less of who is meant than
        // a rare one ("mentoring"): each counts by how few of the lines hold it.
        let rarity = Dictionary(uniqueKeysWithValues: found.map { term in
            (term, log(Double(pool.count + 1) / (Double(termsOf.filter { $0.contains(term) }.count) + 0.5)))
        })
        let whole = rarity.values.reduce(0, +)
        func weight(_ index: Int) -> Double {
            let shared = found.filter { termsOf[index].contains($0) }.reduce(0) { $0 + (rarity[$1] ?? 0) }
            return (whole > 0 ? shared / whole : 0) + (own && pool[index].path.hasPrefix("Journal/user/") ? 0.25 : 0)
        }
        let describing = pool.indices.filter { weight($0) >= 0.5 }
            .sorted { weight($0) != weight($1) ? weight($0) > weight($1) : $0 < $1 }.map { pool[$0] }
        for var line in describing.prefix(6) {
            line.score = Evidence.structural
            if holds(line) { return [line] }
            for name in Evidence.newNames(in: line.text, question: question, ignoring: ignoring).prefix(4) {
                let nameTerms = Set(SearchTerms.terms(of: name))
                let found = widened(search.lines(matching: name + " " + RequestRules.slotWords(for: value), limit: 12, excluding: excluded), evidence: evidence)
                    .filter { hop in !(hop.path == line.path && hop.line == line.line) && !nameTerms.isDisjoint(with: SearchTerms.terms(of: hop.text)) && holds(hop) }
                guard !found.isEmpty else { continue }
                return [line] + found.prefix(2).map { hop in
                    var hop = hop
                    hop.score = Evidence.structural
                    return hop
                }
            }
        }
        return nil
    }

    /// Two hops: when the best line lacks the kind of value asked for (an address, an email)
    /// but names someone the question only describes ("the person I lent my drill to"), the
    /// workspace is searched again for that name, and the lines that hold such a value follow
    /// the first one.
    private func secondHop(_ ranked: [RetrievedLine], value: ValueKind, question: String, ignoring: Set<String>, excluded: Set<String>,
                           evidence: Evidence) -> [RetrievedLine] {
        guard value.isSpan || value == .place, let best = ranked.first else { return ranked }
        func holds(_ line: RetrievedLine) -> Bool {
            value.isSpan ? !ValueSpans.find(value, in: line.text).isEmpty : !Claims.extract(from: line.text, ignoring: ignoring).filter { $0.kind == .name }.isEmpty
        }
        guard !holds(best) || value == .place else { return ranked }
        // The line that describes the person: the first, or — when the first brings in no one
        // (a handbook's general rule about mentors) — the next of the person's own notes among
        // the best few ("I'm mentoring Jory through his first season").
        var describing = best
        if Evidence.newNames(in: best.text, question: question, ignoring: ignoring).isEmpty,
           let note = ranked.prefix(4).dropFirst().first(where: { $0.path.hasPrefix("Journal/user/") && !holds($0)
               && !Evidence.newNames(in: $0.text, question: question, ignoring: ignoring).isEmpty }) {
            describing = note
        }
        let first = describing
        // Each name the first line brings in, in turn, until one leads to such a line ("Ran 8 km
        // with the club. Saskia is organising the race": "Ran" leads nowhere, "Saskia" does).
        var found: [RetrievedLine] = []
        // The names nearest the question's words first: "Ilse Marsh (treasurer)" for "the
        // treasurer", in a line that lists the chair before her.
        let names = Evidence.newNames(in: first.text, question: question, ignoring: ignoring)
        for name in Evidence.nearestFirst(names, to: Support.topicTerms(of: question), in: first.text).prefix(4) where found.isEmpty {
            let hop = WorkspaceSearch(workspace: workspace).lines(matching: name + " " + RequestRules.slotWords(for: value), limit: 12, excluding: excluded)
            let nameTerms = Set(SearchTerms.terms(of: name))
            found = widened(hop, evidence: evidence).filter { line in
                !(line.path == first.path && line.line == first.line) && !nameTerms.isDisjoint(with: SearchTerms.terms(of: line.text))
                    && (value == .place ? ValueSpans.find(.address, in: line.text).count > 0 || holds(line) : holds(line))
            }
        }
        guard !found.isEmpty else { return ranked }
        // Found by the name the first line brought in: kept whatever the model chooses.
        let hopped = found.prefix(2).map { line in
            var line = line
            line.score = Evidence.structural
            return line
        }
        return [first] + hopped + ranked.filter { line in line != first && !hopped.contains { $0.path == line.path && $0.line == line.line } }
    }

    /// Arithmetic over things the request joins with "and" ("the boiler repair and the
    /// new tiles"): each thing is searched for on its own, and the best line about it that
    /// holds an amount (or a date, for days between) comes first — kept whatever the model
    /// chooses. One search for the whole request finds lines about both words at once, seldom
    /// the two lines that hold the operands.
    private func operandLines(_ ranked: [RetrievedLine], question: String, dates: Bool, excluded: Set<String>, evidence: Evidence) -> [RetrievedLine] {
        let parts = RequestRules.operandParts(question)
        guard parts.count >= 2 else { return ranked }
        var found: [RetrievedLine] = []
        // "What did the jars and the frames cost?": an operand is an amount of money, not the
        // "340 g" of a line about jars.
        let money = RequestRules.value(asked: " " + RequestRules.words(of: question).joined(separator: " ") + " ") == .money
        func holdsOperand(_ text: String) -> Bool {
            if dates { return Claims.extract(from: text).contains { $0.kind == .date } }
            let amounts = RunExecutor.amounts(in: [RunExecutor.SourcedLine(text: text, source: nil)])
            return money ? amounts.contains(where: \.isMoney) : !amounts.isEmpty
        }
        for part in parts {
            let topic = Support.topicTerms(of: part).subtracting(Support.topicTerms(of: parts.filter { $0 != part }.joined(separator: " ")))
            guard !topic.isEmpty else { continue }
            let hits = widened(WorkspaceSearch(workspace: workspace).lines(matching: topic.sorted().joined(separator: " "), limit: 12, excluding: excluded),
                               evidence: evidence)
            let holding = hits.first { line in
                !found.contains { $0.path == line.path && $0.line == line.line } && Support.coverage(of: topic, in: line.withHeading) > 0
                    && holdsOperand(line.text)
            }
            if var line = holding {
                line.score = Evidence.structural
                // Of a line that joins several statements (context.md's line for a document:
                // "Date: Monday 21 June · The new delivery date is Friday 2 July · …"), the one
                // about this thing that holds the operand.
                let pieces = AnswerEvidence.pieces(of: line.text).filter(holdsOperand)
                // Of two as good, the later: a line that moves a thing says the new value last.
                if pieces.count > 1, let best = pieces.reversed().max(by: { Support.coverage(of: topic, in: $0) < Support.coverage(of: topic, in: $1) }),
                   Support.coverage(of: topic, in: best) > 0 {
                    line.text = best.trimmingCharacters(in: .whitespaces)
                }
                found.append(line)
            }
        }
        guard found.count >= 2 else { return ranked }
        return found + ranked.filter { line in !found.contains { $0.path == line.path && $0.line == line.line } }
    }

    /// How many times the lines kept are searched for, to be ranked again by their evidence.
    static let retrievalPool = 3

    /// The whole list item a line belongs to when the item runs over several lines: a bullet
    /// and the indented lines under it that carry no marker of their own ("- Saskia rang: the
    /// party is on Saturday." / "  Coming: Bram and Ines."). Either line alone misses half of
    /// what the item says. Nil when the line is no part of such an item, or the item is long.
    static func listItem(around number: Int, in lines: [String]) -> String? {
        let index = number - 1
        guard lines.indices.contains(index) else { return nil }
        func marked(_ line: String) -> Bool {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return ["- ", "* ", "+ "].contains { trimmed.hasPrefix($0) } || trimmed.range(of: #"^\d{1,3}[.)] "#, options: .regularExpression) != nil
        }
        func continuation(_ line: String) -> Bool {
            guard let first = line.first, first == " " || first == "\t" else { return false }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && !marked(line) && !trimmed.hasPrefix("|") && !trimmed.hasPrefix("<!--")
        }
        var start = index
        while !marked(lines[start]) {
            guard continuation(lines[start]), start > 0 else { return nil }
            start -= 1
        }
        var end = start
        while end + 1 < lines.count, continuation(lines[end + 1]) { end += 1 }
        guard end > start else { return nil }
        let text = RunExecutor.bare(lines[start...end].joined(separator: "\n"))
        return text.count > 600 ? nil : text
    }

    /// The whole sentences a line of a hard-wrapped paragraph belongs to (a line of prose cut at
    /// 80 columns is half a sentence), without a list marker; nil when the line stands alone.
    static func sentences(around number: Int, in lines: [String]) -> String? {
        let index = number - 1
        guard lines.indices.contains(index) else { return nil }
        // A quoted line ("> …", an earlier message of a mail thread) joins only quoted lines,
        // its marks left out; "> " alone ends its paragraph as a blank line does.
        func quoted(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).hasPrefix(">") }
        func unquoted(_ line: String) -> String {
            var text = Substring(line.trimmingCharacters(in: .whitespaces))
            while text.hasPrefix(">") { text = text.dropFirst().drop { $0 == " " } }
            return String(text)
        }
        let level = quoted(lines[index])
        func prose(_ line: String) -> Bool {
            let trimmed = unquoted(line)
            // A mail header ("Date: …", "Subject: …") is a line of its own, not part of a sentence.
            return quoted(line) == level && !trimmed.isEmpty && !trimmed.hasPrefix("#") && !trimmed.hasPrefix("- ") && !trimmed.hasPrefix("* ")
                && !trimmed.hasPrefix("|") && !trimmed.hasPrefix("<!--") && !trimmed.hasPrefix("-----") && DocumentShape.emailHeader(trimmed) == nil
                && !DocumentShape.isField(trimmed)
        }
        guard prose(lines[index]) else { return RunExecutor.bare(lines[index]) }
        // A numbered clause ("3.1 You pay the first 300 crowns …") starts a unit of its own.
        func startsClause(_ line: String) -> Bool { DocumentShape.clauseNumber(unquoted(line)) != nil }
        var start = index, end = index
        while start > 0, !startsClause(lines[start]), prose(lines[start - 1]) { start -= 1 }
        while end + 1 < lines.count, prose(lines[end + 1]), !startsClause(lines[end + 1]) { end += 1 }
        guard start < end else { return level ? unquoted(lines[index]) : nil }
        var offset = 0, lineStart = 0, lineEnd = 0
        var joined = ""
        for position in start...end {
            let piece = unquoted(lines[position])
            if position == index { lineStart = offset; lineEnd = offset + piece.count }
            joined += (joined.isEmpty ? "" : " ") + piece
            offset = joined.count + 1
        }
        var kept: [String] = []
        var cursor = joined.startIndex
        for sentence in Sentences.split(joined) {
            guard let found = joined.range(of: sentence, range: cursor..<joined.endIndex) else { continue }
            cursor = found.upperBound
            let from = joined.distance(from: joined.startIndex, to: found.lowerBound), to = joined.distance(from: joined.startIndex, to: found.upperBound)
            if to > lineStart, from < lineEnd { kept.append(sentence) }
        }
        let text = kept.joined(separator: " ")
        guard !text.isEmpty else { return nil }
        return text.count > 600 ? String(text.prefix(600)) + "…" : text
    }
}
