// swift-tools-version: 6.0
import PackageDescription

// hrmd's benchmarks, a package of their own so that the product's manifest (../Package.swift)
// carries none of them. hrmbench uses hrmd's modules through library products the root
// package declares only when HRMD_BENCHMARKS=1 is set (the Makefile's bench targets and
// check-bench-build set it; build this package with it set), and times the root package's own
// release binaries (hrmd, hrmctl; HRMD_BIN_DIR). `make bench` builds both and runs it.
let package = Package(
    name: "hrmd-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "hrmd", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // The figures `make bench` prints, each next to a peer measured in the same run.
        .executableTarget(
            name: "hrmbench",
            dependencies: [
                .product(name: "ANTDecoding", package: "hrmd"),
                .product(name: "BluetoothWire", package: "hrmd"),
                .product(name: "HCIBackend", package: "hrmd"),
                .product(name: "HealthModel", package: "hrmd"),
                .product(name: "HealthRequests", package: "hrmd"),
                .product(name: "HealthStore", package: "hrmd"),
                .product(name: "HealthUnits", package: "hrmd"),
                .product(name: "HealthWire", package: "hrmd"),
                .product(name: "SDBus", package: "hrmd"),
                .product(name: "SensorBackend", package: "hrmd"),
                .product(name: "SensorFrames", package: "hrmd"),
                .product(name: "SensorSimulator", package: "hrmd"),
                .product(name: "SeriesCoding", package: "hrmd"),
                .product(name: "TestSupport", package: "hrmd"),
                .product(name: "Timestamps", package: "hrmd"),
                .product(name: "TraceFormat", package: "hrmd"),
            ]
        ),
        // The floor under hrmctl's one-hour command in `hrmbench read`: the sqlite3 shell's job
        // on hrmctl's stack (Sources/stack-floor), linked as hrmctl is (the Makefile's release link).
        .target(name: "StackFloorDatabase", dependencies: [.product(name: "GRDB", package: "GRDB.swift")]),
        .executableTarget(
            name: "stack-floor",
            dependencies: ["StackFloorDatabase", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
    ]
)
