// swift-tools-version:6.0
import PackageDescription

// Relay: a file-based, agent-native workspace engine. Modules by layer; lower layers never
// import higher ones (see docs/modules/README.md). Dependencies are chosen for cost: CI
// builds from a clean clone on two cores every time.
let package = Package(
    name: "Relay",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "relay", targets: ["relay"]),
        .library(name: "WorkspaceCore", targets: ["WorkspaceCore"]),
        .library(name: "LanguageModels", targets: ["LanguageModels"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Already pulled in by async-http-client; named here for the tests' in-process servers.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // The HTTP API (issue 18): the server of `relay serve` / `relay watch --http`.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Already pulled in by Hummingbird; named for HTTPField in RelayServer.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // Linux calls that Swift's Glibc module does not expose (renameat2, OFD locks, a spawn
        // that closes every other descriptor).
        .target(name: "CRelaySystem"),
        // The JSON parser of configuration files, with lines and columns (a leaf: no dependencies).
        .target(name: "RelayJSON"),
        .target(
            name: "WorkspaceCore",
            dependencies: [
                "RelayJSON",
                "CRelaySystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libinotifytools (Debian: libinotifytools0-dev); only WorkspaceWatcher/Inotify/InotifyReader.swift imports it.
        .systemLibrary(name: "CInotifyTools", providers: [.apt(["libinotifytools0-dev"])]),
        // The system SQLite (Debian: libsqlite3-dev); only RelaySQLite/SQLiteDatabase.swift imports it.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "RelaySQLite", dependencies: ["CSQLite"]),
        .target(
            name: "WorkspaceWatcher",
            dependencies: [
                "WorkspaceCore", "CInotifyTools", "RelaySQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Sync between replicas (design §7): index, version vectors, merges, transports.
        .target(
            name: "WorkspaceSync",
            dependencies: [
                "WorkspaceCore", "RelaySQLite", .product(name: "Logging", package: "swift-log"),
                // The JSON parser with byte ranges: configuration files merge by key path.
                "RelayJSON",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Errno, as WorkspaceCore's Syscall reports it (PeerProcess's calls and its start).
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Model clients (OpenAI-compatible, Anthropic, scripted); knows nothing of workspaces.
        .target(
            name: "LanguageModels",
            dependencies: [
                "RelayJSON",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Part of AsyncHTTPClient's API (ByteBuffer, TimeAmount, IOError).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Relays of agents (design §4): rosters, runs, tools, transcripts, the run journal, replay.
        .target(
            name: "RelayEngine",
            dependencies: [
                "WorkspaceCore", "LanguageModels", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // HTTP (issue 18): the seed app's POST /agent/chat, OpenAI-compatible /v1, auth and limits.
        .target(
            name: "RelayServer",
            dependencies: [
                "WorkspaceCore", "RelayEngine", "LanguageModels",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MCP (issue 30): `relay mcp`, the workspace's primitives as tools for other agents, over
        // stdio. JSON-RPC by hand: the subset is small, and the official SDK would bring an
        // unpinned branch dependency and its own 47 files into every clean CI build.
        .target(
            name: "RelayMCP",
            dependencies: [
                "WorkspaceCore", "RelayEngine", "LanguageModels",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "relay",
            dependencies: [
                "WorkspaceCore", "WorkspaceWatcher", "WorkspaceSync", "LanguageModels", "RelayEngine", "RelayServer", "RelayMCP",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A test tool, not shipped: loops the WorkspaceCore primitives so integration tests can
        // kill -9 a process in the middle of a write and hammer the lock from many processes.
        .executableTarget(
            name: "relay-stress",
            dependencies: ["WorkspaceCore", "WorkspaceSync", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/Helpers/relay-stress"
        ),
        // `make bench`: Relay's primitives against plain system calls, as ratios.
        .executableTarget(
            name: "relay-bench",
            dependencies: ["WorkspaceCore"],
            path: "Tests/Benchmarks/relay-bench"
        ),
        // `make bench`: relay sync against rsync and Unison.
        .executableTarget(
            name: "relay-sync-bench",
            path: "Tests/Benchmarks/relay-sync-bench"
        ),
        // Relay's text merge against `git merge-file` on a corpus of real concurrent edits
        // (Tests/Benchmarks/relay-merge-corpus/make-corpus.py makes it from git histories).
        .executableTarget(
            name: "relay-merge-corpus",
            dependencies: ["WorkspaceSync"],
            path: "Tests/Benchmarks/relay-merge-corpus",
            exclude: ["make-corpus.py"]
        ),
        // `make bench`: the watcher against inotifywait.
        .executableTarget(
            name: "relay-watch-bench",
            path: "Tests/Benchmarks/relay-watch-bench"
        ),
        // `make bench`: the relay engine's overhead per agent step, and a turn on the local model.
        .executableTarget(
            name: "relay-engine-bench",
            dependencies: ["RelayEngine", "LanguageModels", "WorkspaceCore", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Benchmarks/relay-engine-bench"
        ),
        // `make bench`: time to first token and tokens/s through Relay's client against curl.
        .executableTarget(
            name: "relay-model-bench",
            dependencies: ["LanguageModels"],
            path: "Tests/Benchmarks/relay-model-bench"
        ),
        // `make eval`: the agents on a real model, scored (fact recall, precision of numbers and
        // names, questions answered), the template's relay against one plain agent. Drives the
        // `relay` binary as a person would; imports none of Relay's modules.
        .executableTarget(
            name: "relay-eval",
            path: "Tests/Benchmarks/relay-eval"
        ),
        // What the test targets share (not shipped): one scratch workspace (with a relay roster for
        // the engine's tests; replicas served over the sync protocol on a thread), one lock box,
        // one test model, one fake model server (in-process, SwiftNIO), one seeded generator.
        .target(
            name: "RelayTestKit",
            dependencies: [
                "WorkspaceCore", "WorkspaceSync", "LanguageModels", "RelayEngine",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/RelayTestKit"
        ),
        // Unit tests: temporary folders and in-process doubles; no external program, no child
        // process, no real model server.
        .testTarget(
            name: "LanguageModelsTests",
            dependencies: ["LanguageModels", "RelayTestKit", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "WorkspaceCoreTests",
            dependencies: ["WorkspaceCore", "RelayJSON", "RelayTestKit"]
        ),
        .testTarget(
            name: "WorkspaceSyncTests",
            dependencies: ["WorkspaceSync", "WorkspaceCore", "RelaySQLite", "RelayTestKit"]
        ),
        .testTarget(
            name: "WorkspaceWatcherTests",
            dependencies: ["WorkspaceWatcher", "WorkspaceCore"]
        ),
        .testTarget(
            name: "RelayEngineTests",
            dependencies: ["RelayEngine", "WorkspaceCore", "LanguageModels", "RelayTestKit"]
        ),
        // Integration tests: the real binaries, real processes, real inotify, real servers (the
        // local llama-server when one runs), real converters (pdftotext, pandoc), and the long
        // randomized sync property run (`make soak` runs it longer).
        .testTarget(
            name: "RelayIntegrationTests",
            dependencies: [
                "WorkspaceCore", "WorkspaceWatcher", "WorkspaceSync", "LanguageModels", "RelayEngine", "RelayTestKit",
                "relay", "relay-stress",
            ]
        ),
    ]
)
