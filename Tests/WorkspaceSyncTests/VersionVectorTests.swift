import Testing
@testable import WorkspaceSync

@Suite("Version vectors")
struct VersionVectorTests {
    @Test func orderIsDecidedPerReplica() {
        var a = VersionVector()
        a.increment("laptop")
        var b = a
        #expect(a.compare(to: b) == .equal)
        b.increment("desktop")
        #expect(a.compare(to: b) == .before && b.compare(to: a) == .after)
        #expect(b.dominates(a) && !a.dominates(b))
        a.increment("laptop")
        #expect(a.compare(to: b) == .concurrent && b.compare(to: a) == .concurrent)
        let merged = a.merged(with: b)
        #expect(merged.dominates(a) && merged.dominates(b))
        #expect(merged.description == "desktop:1,laptop:2")
    }

    @Test func threeReplicasInARingStayOrdered() {
        // a → b → c → a: each copy carries what it has seen; no pairwise archive needed.
        var a = VersionVector(); a.increment("a")
        var b = a; b.increment("b")
        var c = b; c.increment("c")
        #expect(c.compare(to: a) == .after)
        var a2 = a; a2.increment("a")
        #expect(c.compare(to: a2) == .concurrent, "a edited again without seeing b and c")
    }

    @Test func textFormRoundTripsAndRejectsGarbage() {
        let vector = VersionVector(["x": 3, "y": 1])
        #expect(VersionVector(text: vector.description) == vector)
        #expect(VersionVector(text: "") == VersionVector())
        #expect(VersionVector(text: "x:") == nil)
        #expect(VersionVector(text: "x:1:2") == nil)
        #expect(VersionVector(text: ":4") == nil)
    }
}
