import WorkspaceCore

// This side's copy of the peer's index (kept in the local replica's index): a refresh brings
// only the rows written there since the last sync, checked against the peer's digest, and
// the ack at the end brings the rows this sync wrote there; with the marks of clean syncs.
extension RemoteEndpoint {
    /// The peer's index: its changes since the copy kept in `cache` applied to that copy, or
    /// the whole index when there is no copy or anything about it is doubtful (another epoch,
    /// a sequence that went backwards, a result whose digest is not the peer's).
    public func refresh() throws -> [String: SyncIndex.Entry] {
        var map = try refreshMap()
        try map.complete()
        return map.all
    }

    /// `refresh()`, with the copy's unchanged rows left in the copy: the changes are applied to
    /// it, its digest (kept with it) checked against the peer's, and the rest read only when
    /// the sync asks for them.
    public func refreshMap() throws -> EntryMap {
        if refreshRequested == nil { try requestRefresh() }
        let state = refreshRequested ?? nil
        refreshRequested = nil
        var timings = SyncTimings("remote refresh")
        var response = try receive(op: "refresh", path: nil)
        timings.mark("answer \(response.entries?.count ?? 0) rows")
        let mark = response.mark
        var changes = response.entries ?? []
        var map: EntryMap?
        if response.whole == false {
            if let cache, let state, response.epoch == state.epoch, let sequence = response.sequence, sequence >= state.sequence,
               let epoch = response.epoch {
                // The changes go into the copy, whose digest follows them; if the result is not
                // the peer's index, the copy is dropped and the index read whole below.
                try cache.updatePeer(replica, epoch: epoch, sequence: sequence, entries: changes, whole: false)
                if let summary = try cache.peerSummary(replica),
                   response.digest == SyncIndex.digestText(sum: summary.digestSum, count: UInt64(summary.count)) {
                    try cache.commitWrites()
                    timings.mark("copy updated")
                    var changed: [String: SyncIndex.Entry] = [:]
                    for entry in changes { changed[entry.path] = entry }
                    map = EntryMap(changes: changed, restIn: cache, peer: replica, live: Int(summary.live))
                } else {
                    try cache.forgetPeer(replica)
                    try cache.commitWrites()
                }
            }
            if map == nil {
                // The copy does not add up to the peer's index: read it whole.
                response = try send(SyncProtocol.Request(op: "refresh"))
                changes = response.entries ?? []
            }
        }
        let whole = map == nil
        if whole {
            var all: [String: SyncIndex.Entry] = [:]
            for entry in changes { all[entry.path] = entry }
            map = EntryMap(all)
            if let cache, let epoch = response.epoch, let sequence = response.sequence {
                try cache.updatePeer(replica, epoch: epoch, sequence: sequence, entries: changes, whole: true)
                try cache.commitWrites()
            }
        }
        indexTransfer = IndexTransfer(rows: changes.count, whole: whole)
        refreshedSequence = response.sequence
        // A copy in doubt may mean an index restored from a backup: look at every path.
        peerMark = whole ? nil : mark
        refreshed = nil
        if cache != nil, let epoch = response.epoch, let sequence = response.sequence { refreshed = (epoch, sequence) }
        return map!
    }

    /// Sends the `refresh` request now, so the peer walks its tree while this side does;
    /// `refresh()` reads the answer.
    public func requestRefresh() throws {
        try connect()
        var request = SyncProtocol.Request(op: "refresh")
        // Which client this is: the server answers with its mark of their last clean sync.
        request.peer = cache?.replica
        let state = try cache?.peerState(replica)
        if let state {
            request.epoch = state.epoch
            request.since = state.sequence
        }
        try drain()
        try codec.write(request, to: toPeer.fileDescriptor)
        refreshRequested = .some(state)
        wroteSinceRefresh = false
    }

    /// The ack: the rows the peer's index got since the refresh (the ones this sync wrote
    /// there, and any other writer's) go into the copy, which is then current to the peer's
    /// sequence now.
    public func finish() throws {
        guard let cache, let refreshed else { return }
        // Nothing written there since the refresh: the copy is as current as this sync can make
        // it, and the next refresh asks for whatever another writer added since.
        guard wroteSinceRefresh else { return }
        var timings = SyncTimings("remote ack")
        var request = SyncProtocol.Request(op: "ack")
        request.since = refreshed.sequence
        let response = try send(request)
        timings.mark("answered, \(response.entries?.count ?? 0) rows")
        defer { timings.mark("copy updated") }
        guard response.epoch == refreshed.epoch, let sequence = response.sequence, sequence >= refreshed.sequence else {
            // Not the index we refreshed from: the next sync reads it whole.
            try cache.forgetPeer(replica)
            try cache.commitWrites()
            return
        }
        let entries = response.entries ?? []
        try cache.updatePeer(replica, epoch: refreshed.epoch, sequence: sequence, entries: entries, whole: false)
        try cache.commitWrites()
        indexTransfer?.ackRows = entries.count
        self.refreshed = (refreshed.epoch, sequence)
    }

    public func syncMark(peer: String) throws -> SyncMark? {
        peer == cache?.replica ? peerMark : nil
    }

    /// Sent without waiting: a mark that did not land only makes the next sync look at every path.
    public func setSyncMark(_ mark: SyncMark, peer: String) throws {
        var request = SyncProtocol.Request(op: "setSyncMark")
        request.peer = peer
        request.mark = mark
        try post(request)
    }
}
