import HealthModel
import HealthRequests
import SDBus

/// `org.hrmd.Health1` as the vtable declares it: the same methods, argument names and
/// signatures as `dbus/org.hrmd.Health1.xml` (a test compares the two).
public enum HealthInterface {
    /// The interface with its properties; `version` is the daemon's.
    public static func description(version: String) -> DBusInterfaceDescription {
        DBusInterfaceDescription(
            name: HealthBus.interface,
            methods: [
                method("RequestAuthorization", ["app": "s", "share": "as", "read": "as"], [:]),
                method("AuthorizationStatus", ["app": "s", "type": "s"], ["status": "s"]),
                method("SaveSamples", ["app": "s", "samples": "aa{sv}"], ["stored": "u", "unchanged": "u"]),
                method("QuerySamples", ["app": "s", "type": "s", "since": "x", "until": "x", "limit": "u"], ["samples": "aa{sv}"]),
                method(
                    "QuerySamplesToFile", ["app": "s", "type": "s", "since": "x", "until": "x", "options": "a{sv}", "output": "h"],
                    ["count": "u"]),
                method(
                    "Statistics", ["app": "s", "type": "s", "bucket": "s", "since": "x", "until": "x", "options": "a{sv}"],
                    ["buckets": "a" + StatisticsBucketValue.wireSignature]),
                method("HeartRateVariability", ["app": "s", "since": "x", "until": "x"], ["variability": "a{sv}"]),
                method(
                    "HeartRateZones", ["app": "s", "since": "x", "until": "x", "maxHeartRate": "d"],
                    ["zones": "a" + HeartRateZones.Zone.wireSignature]),
                method(
                    "Changes", ["app": "s", "type": "s", "anchor": "t", "limit": "u"],
                    ["added": "aa{sv}", "deleted": "a" + DeletedSample.wireSignature, "newAnchor": "t"]),
                method("CurrentAnchor", [:], ["anchor": "t"]),
                method("Anchor", ["app": "s", "type": "s"], ["anchor": "t"]),
                method("Observe", ["app": "s", "type": "s"], [:]),
                method("Unobserve", ["app": "s", "type": "s"], [:]),
                method(
                    "DeleteSamples", ["app": "s", "type": "s", "source": "s", "since": "x", "until": "x"], ["deleted": "u"]),
                method("SetAuthorization", ["source": "s", "type": "s", "access": "s", "status": "s"], [:]),
                method("Authorizations", [:], ["entries": "a" + AuthorizationAccessEntry.wireSignature]),
                method("Devices", [:], ["devices": "aa{sv}", "activity": "aa{sv}"]),
                method("Sources", [:], ["sources": "aa{sv}"]),
                method("Import", ["file": "h", "options": "a{sv}"], ["summary": "a{sv}", "messages": "as"]),
            ],
            signals: [
                DBusInterfaceDescription.Signal(name: "SamplesChanged", arguments: arguments(["type": "s", "anchor": "t"])),
            ],
            properties: [
                DBusInterfaceDescription.Property(name: "Version", value: .string(version)),
                DBusInterfaceDescription.Property(
                    name: "Types",
                    value: .array(element: "(ss)", SampleType.all.map { .structure([.string($0.identifier), .string($0.canonicalUnit.unitString)]) })),
                DBusInterfaceDescription.Property(name: "MaxSamplesPerSave", value: .uint32(UInt32(RequestBudgets.samplesPerSave))),
                DBusInterfaceDescription.Property(name: "MaxSamplesPerQuery", value: .uint32(UInt32(RequestBudgets.samplesPerQuery))),
            ])
    }

    /// The arguments of each method, in and out, by name: what ``RequestCoding`` lays
    /// requests and answers out by.
    public static let layouts: [String: (inputs: [DBusArgument], outputs: [DBusArgument])] = Dictionary(
        uniqueKeysWithValues: description(version: "").methods.map { method in
            (method.name, (method.inputs.map { DBusArgument(name: $0.name, signature: $0.signature) },
                           method.outputs.map { DBusArgument(name: $0.name, signature: $0.signature) }))
        })

    private static func method(_ name: String, _ inputs: KeyValuePairs<String, String>, _ outputs: KeyValuePairs<String, String>)
        -> DBusInterfaceDescription.Method
    {
        DBusInterfaceDescription.Method(name: name, inputs: arguments(inputs), outputs: arguments(outputs))
    }

    private static func arguments(_ pairs: KeyValuePairs<String, String>) -> [(name: String, signature: String)] {
        pairs.map { (name: $0.key, signature: $0.value) }
    }
}
