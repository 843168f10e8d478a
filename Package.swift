// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "hrmd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "hrmd", targets: ["hrmd"]),
        .executable(name: "hrmctl", targets: ["hrmctl"]),
        // The client library of the store service, for other Swift programs: the model, the
        // requests, their D-Bus coding and sd-bus; nothing of the daemon or its storage.
        .library(name: "HealthClient", targets: ["HealthClient"]),
    ] + benchmarkProducts,
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        // The HTTP and WebSocket front; TLS for it; SHA-256 of access tokens.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
    ],
    targets: [
        // Pure: exact UTC timestamps, RFC 3339, and the time ranges users type.
        .target(name: "Timestamps"),
        // Pure: HealthKit-style unit grammar, dimensions and conversion.
        .target(name: "HealthUnits"),
        // Pure: raw sensor frames (SensorFrame, sensor states) and their decoders (GATT heart-rate characteristics, serial lines).
        .target(name: "SensorFrames", dependencies: ["Timestamps"]),
        // Pure: ANT serial messages, the HRM receive channel set-up, ANT+ heart-rate pages.
        .target(name: "ANTDecoding"),
        // Pure: what decoders read recordings through, front to back (a file's window or memory).
        .target(name: "ByteSources"),
        // Pure: FIT activity files (header, CRCs, definitions, records, hrv, device_info).
        .target(name: "FITDecoding", dependencies: ["ByteSources"]),
        // Pure: workouts as files other programs import (FIT activities, TCX).
        .target(name: "WorkoutFiles", dependencies: ["HealthModel", "FITDecoding", "JSONLines", "Timestamps"]),
        // Pure: ECG and acceleration strips as files other programs read (EDF+, WFDB, CSV, FHIR R4 SampledData).
        .target(name: "WaveformFiles", dependencies: ["JSONLines", "Timestamps"]),
        // Pure: series chunks: many (time, value) points or heartbeats in one compact blob
        // (delta-of-delta or reference-delta ticks, scaled-integer or XOR values, codes fitted per chunk).
        .target(name: "SeriesCoding"),
        // Pure: JSON values written with their keys in order, one per line.
        .target(name: "JSONLines"),
        // Pure: the hrmd-trace format (JSON Lines of raw frames), both ways.
        .target(name: "TraceFormat", dependencies: ["SensorFrames", "Timestamps", "JSONLines"]),
        // Pure: the health data model, HealthKit's types without storage: sample types and units in
        // use, samples, sources and devices, authorization, queries, change sets, statistics, summaries.
        .target(name: "HealthModel", dependencies: ["HealthUnits", "Timestamps"]),
        // Pure: every request the store serves, defined once for every front: typed arguments and
        // answer, who may make it, its budgets, and what it does with a store.
        .target(name: "HealthRequests", dependencies: ["HealthModel", "HealthUnits", "Timestamps", "JSONLines"]),
        // Daily and per-workout figures (resting heart rate, one-minute recovery, SDNN): pure.
        .target(name: "DailyFigures"),
        // Polar's measurement data (PMD) protocol: control point requests and responses, ECG,
        // acceleration and PPI frames (raw and delta-compressed; ECG and acceleration frames also
        // encoded), device time: pure.
        .target(name: "PMDDecoding"),
        // Desktop notifications of events (org.freedesktop.Notifications on the session bus), for hrmctl notify.
        .target(name: "DesktopNotifications", dependencies: ["HealthModel", "SDBus", "Timestamps"]),
        // The shared health store over SQLite: the model's samples in series chunks, authorization, changes.
        .target(
            name: "HealthStore",
            dependencies: [
                "HealthModel", "HealthUnits", "Timestamps", "SeriesCoding",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Threads of their own that read descriptors, and how they learn to stop (a wake-up pipe beside poll(2)).
        .target(name: "ReaderThreads"),
        // Serial ports done right: raw termios, O_NOCTTY, TIOCEXCL, non-blocking reads on a thread of their own.
        .target(name: "SerialPort", dependencies: ["Timestamps", "ReaderThreads", .product(name: "SystemPackage", package: "swift-system")]),
        // The sensor backend interface and what several backends share: backoff, link retries, status board.
        .target(
            name: "SensorBackend",
            dependencies: ["SensorFrames", "Timestamps", .product(name: "Logging", package: "swift-log")]
        ),
        // A serial port's sessions for the backends on a tty (ANT sticks, serial sensors): open, run, back off, open again.
        .target(
            name: "SerialSessions",
            dependencies: ["SensorBackend", "SensorFrames", "SerialPort", "Timestamps", .product(name: "Logging", package: "swift-log")]
        ),
        // Recordings read and written: traces, FIT files and btsnoop captures as frames, their replay, the trace recorder.
        .target(
            name: "Recordings",
            dependencies: [
                "SensorBackend", "SensorFrames", "Timestamps", "TraceFormat", "ByteSources", "FITDecoding", "BluetoothWire",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The mock chest strap and the simulated heart behind it: seeded readings, ECG and acceleration
        // as Polar PMD frames, one clock for every mock.
        .target(name: "SensorSimulator", dependencies: ["SensorBackend", "SensorFrames", "Timestamps", "PMDDecoding"]),
        // ANT+ heart-rate straps through an ANT USB stick's tty: the backend and the stick's controller.
        .target(
            name: "ANTBackend",
            dependencies: [
                "SensorBackend", "SensorFrames", "ANTDecoding", "SerialPort", "SerialSessions", "Timestamps",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Serial heart-rate sensors speaking the line protocol (`HR 72 RR 812`), one frame per line.
        .target(
            name: "SerialBackend",
            dependencies: [
                "SensorBackend", "SensorFrames", "SerialPort", "SerialSessions", "Timestamps", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // frames → decode → quantities → policy → authorize → batched writes; recordings replayed the same way.
        .target(
            name: "Ingest",
            dependencies: [
                "SensorFrames", "ANTDecoding", "HealthUnits", "HealthModel", "HealthStore", "HeartRateEvents", "DailyFigures", "PMDDecoding", "Timestamps", "Recordings",
                "WorkoutFiles", "FITDecoding", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // libsystemd: sd_notify, the watchdog and the journal.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // The service manager's side of hrmd: readiness, status, watchdog, journal logging.
        .target(
            name: "SystemdSupport",
            dependencies: ["CSystemd", .product(name: "Logging", package: "swift-log")]
        ),
        // libudev: device enumeration and the hot-plug monitor.
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // glibc's malloc extensions (malloc_trim, for hrmd's long runs).
        .systemLibrary(name: "CMalloc"),
        // ANT sticks and serial sensors found through udev, at start-up and when plugged in.
        .target(
            name: "DeviceDiscovery",
            dependencies: ["CUdev", "ReaderThreads", "SensorBackend", "SensorFrames", .product(name: "Logging", package: "swift-log")]
        ),
        // sd_bus_vtable arrays built at run time (the SD_BUS_* vtable macros are C initialisers).
        .target(name: "CSDBusVTable", linkerSettings: [.linkedLibrary("systemd")]),
        // A small typed binding over sd-bus: calls, signals as async streams, exported objects, values both ways.
        .target(name: "SDBus", dependencies: ["CSystemd", "CSDBusVTable"]),
        // Pure: Bluetooth host-interface wire formats: addresses, HCI events and commands,
        // advertising data, ACL/L2CAP reassembly, ATT PDUs, btsnoop captures.
        .target(name: "BluetoothWire", dependencies: ["ByteSources"]),
        // libbluetooth (BlueZ's libbluetooth-dev): HCI and L2CAP sockets, straight to the kernel.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // BLE chest straps without bluetoothd: LE scanning on an HCI socket, an ATT client over L2CAP.
        .target(
            name: "HCIBackend",
            dependencies: [
                "CBluetooth", "BluetoothWire", "SensorBackend", "SensorFrames", "Timestamps", "ReaderThreads",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // BLE chest straps through bluetoothd's D-Bus API.
        .target(
            name: "BlueZBackend",
            dependencies: [
                "SDBus", "SensorBackend", "SensorFrames",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The store service's wire protocol: names, limits and the D-Bus codings of samples,
        // statistics, devices and authorizations, shared by the service and its clients.
        .target(
            name: "HealthWire", dependencies: ["HealthModel", "HealthRequests", "HealthUnits", "Timestamps", "SDBus"],
            plugins: ["InterfaceTablePlugin"]),
        // Build tool: the method table of org.hrmd.Health1 from its interface document (dbus/).
        .plugin(name: "InterfaceTablePlugin", capability: .buildTool()),
        // The shared store as a service on the system bus (org.hrmd.Health1): who calls, polkit,
        // enforced authorization, queries, statistics, imports and change notifications.
        .target(
            name: "HealthService",
            dependencies: [
                "HealthModel", "HealthRequests", "HealthStore", "HealthWire", "SDBus", "RequestServing",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Where the store and the request layer meet: the SQLite store as the store every front's
        // requests are served with.
        .target(name: "RequestServing", dependencies: ["HealthRequests", "HealthStore"]),
        // Live samples and sensor states as they are stored, fanned out to many readers, each
        // seeing only what its source may read, each with a bounded queue.
        .target(
            name: "LiveFeed",
            dependencies: [
                "HealthModel", "HealthStore", "Timestamps",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The store's requests over HTTP and WebSocket (Hummingbird), token-guarded, with the
        // live stream and the dashboard's files.
        .target(
            name: "HTTPFront",
            dependencies: [
                "HealthModel", "HealthRequests", "HealthStore", "RequestServing", "LiveFeed", "JSONLines", "Timestamps",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // libmosquitto: the MQTT client library.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // Live heart rate to an MQTT broker, with Home Assistant discovery: a live-feed reader
        // as the source hrmd/mqtt, over a thin typed wrapper of libmosquitto.
        .target(
            name: "MQTTPublisher",
            dependencies: [
                "CMosquitto", "HealthModel", "HealthRequests", "HealthStore", "LiveFeed", "JSONLines", "Secrets", "Timestamps",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // libpq's header (Debian's libpq-dev, /usr/include/postgresql): its types and constants only.
        // Nothing links libpq: PostgresClient loads it at its first connection.
        .systemLibrary(name: "CPostgreSQL"),
        // A PostgreSQL client over libpq, loaded when first connecting: connections by URI, key=value or service
        // name, every query under a deadline, text-format results and arrays, COPY FROM STDIN, LISTEN/NOTIFY.
        .target(name: "PostgresClient", dependencies: ["CPostgreSQL", "Secrets"]),
        // A value whose every printed form is redacted: passwords, connection strings, tokens.
        .target(name: "Secrets"),
        // The central store in PostgreSQL that gateways sync into: its schema and migrations, a
        // gateway's batches applied exactly once with its cursor, the identity of samples across
        // gateways, and reads for hrmctl. Knows nothing of Bluetooth or of the local store's files.
        .target(name: "CentralStore", dependencies: ["HealthModel", "PostgresClient", "SeriesCoding"]),
        // hrmd's sync service: follows the local store's anchored changes as the source hrmd/sync
        // and sends them to the central store in batches, through every fault.
        .target(
            name: "CentralSync",
            dependencies: [
                "CentralStore", "HealthModel", "HealthStore", "PostgresClient", "Secrets",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A typed client of the store service: every method of org.hrmd.Health1, the store's types in and out.
        .target(name: "HealthClient", dependencies: ["HealthModel", "HealthRequests", "HealthWire", "SDBus", "Timestamps"]),
        // How hrmctl reaches a store with the store's requests: a file served in process, the store service, or the central store (read-only).
        .target(
            name: "StoreTransport",
            dependencies: [
                "CentralStore", "CommandSupport", "HealthClient", "HealthModel", "HealthRequests", "HealthStore", "HealthWire",
                "PostgresClient", "RequestServing", "Secrets", "Timestamps",
            ]),
        // Heart-rate events (high, low, contact lost, battery low): the rules and their detection over a stream of readings (pure).
        .target(name: "HeartRateEvents", dependencies: ["Timestamps"]),
        // The configuration file and sensor specifications, and the gateway's name [mqtt] and [sync] share.
        .target(name: "HRMConfiguration", dependencies: ["HeartRateEvents", "SensorFrames", "Secrets"]),
        // What both commands share: exit codes, store location, time expressions, configuration-file lookup, version.
        .target(
            name: "CommandSupport",
            dependencies: [
                "HealthModel", "HealthStore", "HRMConfiguration", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "hrmd",
            dependencies: [
                "CommandSupport", "HRMConfiguration", "Ingest", "SensorBackend", "SensorFrames", "Recordings", "SensorSimulator",
                "ANTBackend", "SerialBackend", "HealthModel", "HealthRequests", "HealthStore", "SystemdSupport", "DeviceDiscovery",
                "BlueZBackend", "HCIBackend", "BluetoothWire", "HealthService", "HealthWire", "CMalloc", "HTTPFront", "LiveFeed", "MQTTPublisher",
                "CentralSync", "HeartRateEvents", "PostgresClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The order of hrmd's functions in its release link (the Makefile's release target).
            exclude: ["hrmd.order"]
        ),
        .executableTarget(
            name: "hrmctl",
            dependencies: [
                "CommandSupport", "HealthModel", "HealthRequests", "HealthStore", "HealthUnits", "SensorFrames", "Timestamps", "JSONLines",
                "Ingest", "Recordings", "ReaderThreads", "HealthClient", "HealthWire", "StoreTransport", "HRMConfiguration", "WorkoutFiles",
                "DesktopNotifications", "SDBus", "PMDDecoding", "WaveformFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Prints what udev discovery sees; the umockdev tests drive it.
        .executableTarget(name: "hotplug-probe", dependencies: ["DeviceDiscovery"], path: "Tests/HotplugProbe"),
        // Child processes and temporary directories for end-to-end tests and benchmarks.
        .target(
            name: "TestSupport",
            dependencies: [
                "FITDecoding", "ANTDecoding", "BluetoothWire", "PostgresClient", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support"),
        // Writes the btsnoop captures the tests build, for Wireshark to check (Tests/captures).
        .executableTarget(name: "capture-writer", dependencies: ["TestSupport", "BluetoothWire"], path: "Tests/CaptureWriter"),

        .testTarget(name: "TimestampsTests", dependencies: ["Timestamps"]),
        .testTarget(name: "HeartRateEventsTests", dependencies: ["HeartRateEvents", "Timestamps"]),
        .testTarget(name: "HealthUnitsTests", dependencies: ["HealthUnits"]),
        .testTarget(name: "SensorFramesTests", dependencies: ["SensorFrames", "TestSupport"]),
        .testTarget(
            name: "HealthStoreTests",
            dependencies: ["HealthModel", "HealthStore", "HealthUnits", "Timestamps", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "IngestTests",
            dependencies: [
                "Ingest", "Recordings", "SensorBackend", "SensorSimulator", "SensorFrames", "ANTDecoding", "HealthModel", "HealthStore", "HealthUnits",
                "Timestamps", "TestSupport", "BluetoothWire",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A sink that keeps what a backend sends, for the backends' tests to wait on.
        .target(
            name: "SensorTestSupport", dependencies: ["SensorBackend", "SensorFrames", "TestSupport"], path: "Tests/SensorTestSupport"),
        .testTarget(
            name: "SensorBackendTests",
            dependencies: ["SensorBackend", "SensorFrames", "SensorTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "RecordingsTests",
            dependencies: [
                "Recordings", "SensorFrames", "BluetoothWire", "ByteSources", "TestSupport", "Timestamps",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SensorSimulatorTests", dependencies: ["SensorSimulator", "SensorFrames", "SensorTestSupport", "PMDDecoding", "TestSupport"]),
        .testTarget(
            name: "ANTBackendTests",
            dependencies: [
                "ANTBackend", "ANTDecoding", "SensorFrames", "SensorTestSupport", "TestSupport", "Timestamps",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SerialBackendTests",
            dependencies: [
                "SerialBackend", "SensorFrames", "SensorTestSupport", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "ReaderThreadsTests", dependencies: ["ReaderThreads", "TestSupport"]),
        .testTarget(
            name: "SystemdSupportTests",
            dependencies: ["SystemdSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "FITDecodingTests", dependencies: ["ByteSources", "FITDecoding", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "WorkoutFilesTests", dependencies: ["WorkoutFiles", "FITDecoding", "HealthModel", "Timestamps", "ByteSources"]),
        .testTarget(name: "WaveformFilesTests", dependencies: ["WaveformFiles", "JSONLines", "Timestamps"]),
        .testTarget(name: "JSONLinesTests", dependencies: ["JSONLines"]),
        .testTarget(name: "SeriesCodingTests", dependencies: ["SeriesCoding", "TestSupport"]),
        .testTarget(
            name: "DeviceDiscoveryTests",
            dependencies: ["DeviceDiscovery", "SensorBackend", "SensorFrames", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "ANTDecodingTests", dependencies: ["ANTDecoding", "TestSupport"]),
        .testTarget(
            name: "SerialPortTests", dependencies: ["SerialPort", "TestSupport", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "TraceFormatTests", dependencies: ["TraceFormat", "SensorFrames", "Timestamps"]),
        .testTarget(name: "MQTTPublisherTests", dependencies: ["MQTTPublisher", "JSONLines", "HealthModel", "LiveFeed", "Timestamps"]),
        .testTarget(
            name: "CentralStoreTests",
            dependencies: [
                "CentralStore", "CommandSupport", "HealthModel", "HealthStore", "HealthUnits", "PostgresClient", "StoreTransport", "TestSupport",
                "Timestamps",
            ]),
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient", "Secrets", "TestSupport"]),
        .testTarget(
            name: "CentralSyncTests",
            dependencies: [
                "CentralStore", "CentralSync", "HealthModel", "HealthStore", "HealthUnits", "PostgresClient", "Secrets", "Timestamps", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "HTTPFrontTests",
            dependencies: [
                "HTTPFront", "HealthModel", "HealthRequests", "JSONLines", "LiveFeed", "Timestamps",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .testTarget(name: "HRMConfigurationTests", dependencies: ["HRMConfiguration", "CommandSupport", "HeartRateEvents", "SensorFrames", "Timestamps"]),
        .testTarget(name: "SDBusTests", dependencies: ["SDBus", "TestSupport"]),
        .testTarget(
            name: "StoreTransportTests",
            dependencies: [
                "StoreTransport", "CommandSupport", "HealthClient", "HealthModel", "HealthRequests", "HealthStore", "HealthWire", "SDBus", "TestSupport",
                "Timestamps",
            ]
        ),
        .testTarget(name: "DailyFiguresTests", dependencies: ["DailyFigures", "TestSupport"]),
        .testTarget(name: "PMDDecodingTests", dependencies: ["PMDDecoding", "TestSupport"]),
        .testTarget(name: "DesktopNotificationsTests", dependencies: ["DesktopNotifications", "HealthModel", "Timestamps"]),
        .testTarget(
            name: "HealthWireTests", dependencies: ["HealthRequests", "HealthWire", "HealthModel", "HealthUnits", "SDBus", "Timestamps"]),
        .testTarget(
            name: "HealthServiceTests", dependencies: ["HealthModel", "HealthRequests", "HealthService", "HealthUnits", "HealthWire", "SDBus", "Timestamps"]),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZBackend", "SDBus", "SensorBackend", "SensorFrames", "TestSupport"]),
        .testTarget(name: "BluetoothWireTests", dependencies: ["BluetoothWire", "TestSupport"]),
        .testTarget(
            name: "HCIBackendTests",
            dependencies: [
                "HCIBackend", "BluetoothWire", "SensorBackend", "SensorFrames", "TestSupport", "ReaderThreads",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LiveFeedTests",
            dependencies: [
                "LiveFeed", "HealthModel", "HealthStore", "HealthUnits", "Timestamps", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["TestSupport", "Timestamps", "ANTDecoding", "BluetoothWire", .product(name: "GRDB", package: "GRDB.swift")]
        ),
    ]
)

/// The modules the benchmarks' package (Benchmarks/Package.swift, which depends on this one by
/// path) builds hrmbench from: the modules it imports, and the tests' support code it shares.
/// They are products only while the Makefile's benchmark targets build that package
/// (HRMD_BENCHMARKS=1), so that nothing else links them: they are not an interface of hrmd.
var benchmarkProducts: [Product] {
    guard Context.environment["HRMD_BENCHMARKS"] == "1" else { return [] }
    return [
        "ANTDecoding", "BluetoothWire", "HCIBackend", "HealthModel", "HealthRequests", "HealthStore", "HealthUnits", "HealthWire",
        "SDBus", "SensorBackend", "SensorFrames", "SensorSimulator", "SeriesCoding", "TestSupport", "Timestamps", "TraceFormat",
    ].map { name in .library(name: name, targets: [name]) }
}
