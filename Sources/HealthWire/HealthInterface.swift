import HealthModel
import HealthRequests
import SDBus

/// `org.hrmd.Health1` as the vtable declares it. Its methods, with their argument names and
/// signatures, are generated at build time from the interface document
/// `dbus/org.hrmd.Health1.xml` (``methods``); the signal and properties are written here.
public enum HealthInterface {
    /// The interface with its properties; `version` is the daemon's.
    public static func description(version: String) -> DBusInterfaceDescription {
        DBusInterfaceDescription(
            name: HealthBus.interface,
            methods: methods,
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

    private static func arguments(_ pairs: KeyValuePairs<String, String>) -> [(name: String, signature: String)] {
        pairs.map { (name: $0.key, signature: $0.value) }
    }
}
