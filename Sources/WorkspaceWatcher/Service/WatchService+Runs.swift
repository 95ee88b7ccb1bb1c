import Foundation
import Logging
import WorkspaceCore

extension WatchService {
    // MARK: Running triggers

    func dispatch() throws {
        guard let store, !stopping, queueMayHaveWork || !ended.isEmpty else { return }
        var outcomes = ended
        ended = []
        var starting: [(WatchStore.Trigger, TriggerRule)] = []
        // Rounds, because a trigger that stands aside frees its place for the next one.
        var again = true
        while again && queueMayHaveWork {
            again = false
            queueMayHaveWork = false
            var planned: [String: Int] = [:]
            var full = Set<String>()
            var free = 0
            for rule in configuration.rules {
                let slots = rule.concurrency - running[rule.name, default: 0] - starting.filter { $0.1.name == rule.name }.count
                if case .relay = rule.action, launcher == nil { full.insert(rule.name); continue }
                if slots <= 0 { full.insert(rule.name) } else { free += slots }
            }
            guard free > 0 else { break }
            let decided = Set(outcomes.map(\.id))
            for trigger in try store.pending(excluding: full, limit: free + deferred.count + decided.count)
            where deferred[trigger.id] == nil && !decided.contains(trigger.id) {
                guard let rule = configuration.rules.first(where: { $0.name == trigger.rule }) else { continue }
                let taken = running[rule.name, default: 0] + planned[rule.name, default: 0] + starting.filter { $0.1.name == rule.name }.count
                if taken >= rule.concurrency { continue }
                switch try settledContent(of: trigger) {
                case .current:
                    planned[rule.name, default: 0] += 1
                    starting.append((trigger, rule))
                case .changing:
                    deferred[trigger.id] = trigger.path
                case .superseded(let note):
                    outcomes.append(WatchStore.Outcome(id: trigger.id, state: .superseded, status: nil, note: note))
                    logger.info("trigger stands aside", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(trigger.rule)", "relay.note": "\(note)"])
                    queueMayHaveWork = true
                    again = true
                }
            }
        }
        if launcher == nil {
            try store.noteWaiting(relayRules: configuration.rules.compactMap { rule in
                if case .relay(let relay) = rule.action { return (rule.name, relay) } else { return nil }
            })
        }
        // A relay rule's row names its run before the run exists (kept when the row already
        // has one: a run a crash interrupted is resumed under its name, not made again).
        for index in starting.indices {
            if case .relay = starting[index].1.action, starting[index].0.run == nil {
                starting[index].0.run = launcher?.runID(forTrigger: starting[index].0.id)
            }
        }
        // One transaction: the runs that ended, those that stand aside, those about to start.
        try store.commitRuns(finished: outcomes, starting: starting.map { WatchStore.Start(id: $0.0.id, run: $0.0.run) })
        for (trigger, rule) in starting { start(trigger, rule: rule) }
    }

    /// Whether the file still holds the content that settled, so a run works on it under its key.
    enum Settled { case current, changing, superseded(String) }

    func settledContent(of trigger: WatchStore.Trigger) throws -> Settled {
        guard let store else { return .current }
        guard let record = try store.file(trigger.path) else {
            // Moved away a moment ago: it may turn up elsewhere in the workspace, and then
            // its trigger moves with it.
            if departures.contains(trigger.path) { return .changing }
            return .superseded("the file was gone before this ran")
        }
        if record.hash != trigger.hash {
            // Newer content was recorded: its own trigger runs instead — or, when the newer
            // content started nothing (Relay's own write folded into the file), a trigger for
            // it takes this one's place, so a person's drop is never lost.
            if try store.enqueueSuccessor(of: trigger, hash: record.hash) {
                logger.info("trigger re-keyed to the file's newer content", metadata: ["relay.path": "\(trigger.path)"])
            }
            return .superseded("the file changed before this ran; the run for its newer content stands in")
        }
        guard let stamp = workspace.stamp(ofFileAt: trigger.path) else { return .changing }
        if stamp == record.stamp { return .current }
        // The stamp moved since it settled: the bytes decide (a touch is not new content).
        guard let (_, hash) = try workspace.fingerprint(ofFileAt: trigger.path) else { return .changing }
        return hash.hex == trigger.hash ? .current : .changing
    }

    func start(_ trigger: WatchStore.Trigger, rule: TriggerRule) {
        running[rule.name, default: 0] += 1
        runs.insert(trigger.id)
        let workspace = self.workspace, logger = self.logger, launcher = self.launcher
        switch rule.action {
        case .command(let command):
            // Its thread is started here, on the actor: no hop through a task before `sh`.
            TriggerRunner(workspace: workspace, logger: logger, copyGate: options.copyGate)
                .start(command: command, id: trigger.id, path: trigger.path, hash: trigger.hash, rule: rule.name) { ended in
                    let outcome: (WatchStore.State, Int32?, String?)
                    switch ended {
                    case .exited(let status, let note): outcome = (status == 0 ? .done : .failed, status, note)
                    case .stoodAside(let note): outcome = (.superseded, nil, note)
                    }
                    Task { await self.finished(trigger, rule: rule.name, outcome: outcome) }
                }
        case .relay(let relay):
            Task {
                let outcome: (WatchStore.State, Int32?, String?)
                do {
                    guard let launcher, let run = trigger.run else { throw WatcherError(code: .system, message: "no relay engine to run '\(relay)'") }
                    switch try await launcher.launch(relay: relay, path: trigger.path, hash: trigger.hash, run: run) {
                    case .stoodAside(let note): outcome = (.superseded, nil, note)
                    case .finished: outcome = (.done, 0, nil)
                    }
                } catch {
                    outcome = (.failed, nil, "\(error)")
                }
                await self.finished(trigger, rule: rule.name, outcome: outcome)
            }
        }
    }

    func finished(_ trigger: WatchStore.Trigger, rule: String, outcome: (WatchStore.State, Int32?, String?)) {
        runs.remove(trigger.id)
        running[rule, default: 1] -= 1
        queueMayHaveWork = true
        logger.info("trigger finished", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(rule)", "relay.state": "\(outcome.0.rawValue)"])
        // Test hook: the run is over (a relay run's journal says so) and its row still says
        // running — the restart must neither lose the drop nor run it twice.
        if options.dieAfterARunEnds && outcome.0 == .done { kill(getpid(), SIGKILL) }
        // While stopping, a run cut short stays 'running' and runs again at the next start.
        if stopping && outcome.0 == .failed { return }
        if outcome.0 == .superseded {
            // The run found newer bytes: they run under their own key — queued here when
            // they were recorded without a trigger (Relay's own write folded into the file).
            logger.info("trigger stands aside", metadata: ["relay.path": "\(trigger.path)", "relay.trigger": "\(rule)", "relay.note": "\(outcome.2 ?? "")"])
            if let store, let record = try? store.file(trigger.path), record.hashKnown, record.hash != trigger.hash,
               (try? store.enqueueSuccessor(of: trigger, hash: record.hash)) == true {
                logger.info("trigger re-keyed to the file's newer content", metadata: ["relay.path": "\(trigger.path)"])
            }
        }
        ended.append(WatchStore.Outcome(id: trigger.id, state: outcome.0, status: outcome.1, note: outcome.2))
        wakeup.signal()
    }

    /// A queue from before rows named their runs: pending rows of relay rules get the runs an
    /// older Relay recorded for them beside the ledger (`.relay/runs/by-trigger/`), so a run
    /// under way at the upgrade resumes; then those records go. Done once (`meta` notes it);
    /// rows already done or failed need no run. Without a launcher it waits for a daemon that
    /// has one.
    func adoptRunsRecordedBesideTheLedger() throws {
        guard let store, let launcher, try store.meta(Self.ledgerNamesRuns) == nil else { return }
        var relays: [String: String] = [:]
        for rule in configuration.rules { if case .relay(let relay) = rule.action { relays[rule.name] = relay } }
        let waiting = try store.triggers(in: [.pending], limit: Int.max).filter { $0.run == nil && relays[$0.rule] != nil }
        let found = waiting.isEmpty ? [] : launcher.runsRecordedBesideTheLedger(waiting.map { (relays[$0.rule]!, $0.path, $0.hash) })
        let adopted = zip(waiting, found).compactMap { trigger, run in run.map { (id: trigger.id, run: $0) } }
        try store.adoptRuns(adopted, noting: Self.ledgerNamesRuns)
        if !adopted.isEmpty {
            logger.notice("runs recorded beside the trigger queue by an older Relay are now named in it", metadata: ["relay.count": "\(adopted.count)"])
        }
        launcher.forgetRunsRecordedBesideTheLedger()
    }

    /// The `meta` key saying the queue's rows name their runs (set at the first start that has
    /// a launcher).
    static let ledgerNamesRuns = "ledger-names-runs"

    func finishRuns() async {
        stopping = true
        let deadline = Settler.now() + options.shutdownGrace.nanosecondsValue
        while !runs.isEmpty && Settler.now() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if !runs.isEmpty {
            logger.warning("runs still going at shutdown will run again at the next start", metadata: ["relay.count": "\(runs.count)"])
        }
        do {
            try store?.commitRuns(finished: ended, starting: [])
            ended = []
        } catch {
            logger.error("could not record finished runs", metadata: ["relay.error": "\(error)"])
        }
    }
}
