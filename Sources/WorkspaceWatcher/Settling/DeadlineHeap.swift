/// A binary min-heap of (deadline, path): the settler's next due path in O(log n), so a burst of
/// 20,000 files costs 20,000 pushes and pops, not a scan of every pending path at each wake-up.
/// Items go stale when their path gets a later deadline; the settler skips those when popped.
struct DeadlineHeap {
    private var items: [(deadline: Int64, path: String)] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var first: (deadline: Int64, path: String)? { items.first }

    mutating func push(_ deadline: Int64, _ path: String) {
        items.append((deadline, path))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].deadline < items[parent].deadline else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (deadline: Int64, path: String)? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count && items[left].deadline < items[smallest].deadline { smallest = left }
            if right < items.count && items[right].deadline < items[smallest].deadline { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }

    mutating func removeAll() { items.removeAll(keepingCapacity: false) }
}
