import Foundation

/// Where the built `hrmd` and `hrmctl` are: `$HRMD_BIN_DIR`, else beside the running test
/// executable (SwiftPM puts them all in one build directory). The benchmarks, built in a
/// package of their own (Benchmarks), are given it.
public enum BuiltProducts {
    public static var directory: String {
        if let directory = ProcessInfo.processInfo.environment["HRMD_BIN_DIR"], !directory.isEmpty { return directory }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = (executable as NSString).deletingLastPathComponent
        // An XCTest bundle on Linux may be a directory: hrmdPackageTests.xctest/...
        while directory.hasSuffix(".xctest") || directory.contains(".xctest/") {
            directory = (directory as NSString).deletingLastPathComponent
        }
        return directory
    }

    public static func path(of product: String) -> String { "\(directory)/\(product)" }

    public static var hrmd: String { path(of: "hrmd") }
    public static var hrmctl: String { path(of: "hrmctl") }
}
