import Foundation
import HRMConfiguration

/// Reads the configuration file both programs share: the one named with --config (which must
/// exist), else the system one when it exists, else the defaults.
public enum ConfigurationFile {
    /// The file the service reads.
    public static let systemPath = "/etc/hrmd/hrmd.conf"

    public static func load(explicitPath: String?) throws(CommandFailure) -> DaemonConfiguration {
        let path: String
        if let explicitPath {
            path = explicitPath
            guard FileManager.default.fileExists(atPath: path) else {
                throw CommandFailure("configuration file \(path) does not exist", status: .noInput)
            }
        } else if FileManager.default.fileExists(atPath: systemPath) {
            path = systemPath
        } else {
            return DaemonConfiguration()
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let status: ExitStatus = access(path, R_OK) != 0 ? .permissionDenied : .failure
            throw CommandFailure("cannot read the configuration file \(path): \(error.localizedDescription)", status: status)
        }
        do {
            return try DaemonConfiguration(text: text, file: path)
        } catch {
            throw CommandFailure("\(error)", status: .usage)
        }
    }
}
