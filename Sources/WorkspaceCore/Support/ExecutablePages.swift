import Glibc

/// The pages of the running executable's code and read-only data that a long-running process
/// no longer needs resident. Starting `relay` touches far more of its 180 MB static binary than
/// a daemon then uses — the loader reads 135,000 relocations and the symbol table, start-up
/// code runs once, and each fault maps 64 KiB around it — and those pages count in its resident
/// memory for as long as it runs. They are clean copies of the file: letting them go costs
/// nothing, and a page used again is mapped back from the page cache.
///
/// For example, a daemon once it has started:
/// ```swift
/// let released = ExecutablePages.release()   // bytes of mappings advised
/// ```
public enum ExecutablePages {
    /// Advises `MADV_DONTNEED` for every mapping of the executable file that is private, not
    /// writable and holds no page of its own (`Anonymous: 0 kB` in /proc/self/smaps): code and
    /// read-only data as the file has them. Mapped read-only is not enough — the part of the
    /// data the loader relocated and then made read-only (RELRO) holds pages of the process's
    /// own, which must stay. Only the executable: the kernel refuses writes to a file being
    /// executed (`ETXTBSY`), so the pages mapped back are the ones let go. Returns how many
    /// bytes of mappings were advised (0 where /proc is not there).
    @discardableResult
    public static func release() -> Int {
        var released = 0
        for mapping in mappings {
            guard let address = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if case .success = Syscall.adviseDontNeed(address, Int(mapping.end - mapping.start)) { released += Int(mapping.end - mapping.start) }
        }
        return released
    }

    /// The mappings to advise, read from /proc/self/smaps once, at the first `release()`: they
    /// do not change while the process runs (the loader mapped and relocated the executable
    /// before `main`, and a read-only mapping gains no page of its own). Reading smaps walks
    /// every page table of the process — a daemon that lets go every 10,000 files of a walk
    /// paid that ten times per start.
    private static let mappings: [(start: UInt, end: UInt)] = readMappings()

    private static func readMappings() -> [(start: UInt, end: UInt)] {
        guard case .success(let executable) = Syscall.readlink("/proc/self/exe"),
              let smaps = try? StateFile.read("/proc/self/smaps") else { return [] }
        var candidates: [(start: UInt, end: UInt)] = []
        var current: (start: UInt, end: UInt)?
        for line in String(decoding: smaps, as: UTF8.self).split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                // A mapping's header: "start-end perms offset dev inode   path".
                current = nil
                let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
                guard fields.count == 6, fields[1].hasPrefix("r"), fields[1].dropFirst().first == "-", fields[1].last == "p",
                      fields[5].trimmingSpaces() == executable else { continue }
                let range = fields[0].split(separator: "-")
                guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start else { continue }
                current = (start, end)
            } else if let mapping = current, line.hasPrefix("Anonymous:") {
                // Pages written since the mapping was made (relocations): keep the mapping.
                if line.split(separator: " ").dropFirst().first == "0" { candidates.append(mapping) }
                current = nil
            }
        }
        return candidates
    }
}

private extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while result.first == " " { result = result.dropFirst() }
        while result.last == " " { result = result.dropLast() }
        return result
    }
}
