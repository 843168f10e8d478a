import Foundation
import HealthModel
import Secrets

/// What the publisher needs, resolved from `[mqtt]`: how to reach the broker (with the
/// password read from its file), where to publish, and whether to send discovery documents.
public struct MQTTSettings: Sendable {
    public var connection: MosquittoOptions
    public var layout: MQTTLayout
    public var publishesDiscovery = true
    /// The broker as the log names it (`mqtt://HOST:PORT`): never credentials.
    public var brokerName: String

    public init(connection: MosquittoOptions, layout: MQTTLayout, brokerName: String) {
        self.connection = connection
        self.layout = layout
        self.brokerName = brokerName
    }

    /// The types the publisher reads: heart rate, workouts, the events, and RR intervals when it
    /// publishes them.
    public var types: [SampleType] {
        (layout.publishesRRIntervals ? [.heartRate, .rrInterval, .workout] : [.heartRate, .workout]) + SampleType.eventTypes
    }

    /// The password in `path`: its first line, without the line break.
    public static func readPassword(file path: String) throws(MQTTPublisherError) -> Secret {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MQTTPublisherError("mqtt: cannot read the password file \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw MQTTPublisherError("mqtt: the password file \(path) is not UTF-8 text")
        }
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw MQTTPublisherError("mqtt: the password file \(path) has an empty first line") }
        return Secret(password)
    }
}

/// A publisher that cannot start (its settings, its password file, libmosquitto): one line.
public struct MQTTPublisherError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
