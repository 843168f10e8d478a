@preconcurrency import Glibc

/// One exported interface: its methods, signals and (constant, read-only) properties, as
/// `DBusConnection.exportObject` registers them with sd-bus. Introspection,
/// `org.freedesktop.DBus.Properties` and the check of each call's signature come from it.
public struct DBusInterfaceDescription: Sendable, Hashable {
    /// A named argument of a method or signal.
    public struct Argument: Sendable, Hashable {
        /// The name introspection shows (a D-Bus member name: letters, digits, `_`).
        public var name: String
        /// A single complete D-Bus type (`s`, `a{sv}`, `h`, …).
        public var signature: String

        public init(name: String, signature: String) {
            self.name = name
            self.signature = signature
        }
    }

    /// A method. Every method can be called by any user: the vtable entry is
    /// `SD_BUS_VTABLE_UNPRIVILEGED`, so authorizing a caller is the service's job
    /// (`DBusMethodCall.senderUID`, polkit), not sd-bus's CAP_SYS_ADMIN check.
    public struct Method: Sendable, Hashable {
        public var name: String
        public var inputs: [Argument]
        public var outputs: [Argument]

        public init(name: String, inputs: [(name: String, signature: String)] = [], outputs: [(name: String, signature: String)] = []) {
            self.name = name
            self.inputs = inputs.map { Argument(name: $0.name, signature: $0.signature) }
            self.outputs = outputs.map { Argument(name: $0.name, signature: $0.signature) }
        }

        /// The signature a call must have (the inputs' signatures joined).
        public var inputSignature: String { inputs.map(\.signature).joined() }
        /// The signature of a successful reply (the outputs' signatures joined).
        public var outputSignature: String { outputs.map(\.signature).joined() }
    }

    /// A signal the interface emits (declared for introspection; `emitSignal` sends it).
    public struct Signal: Sendable, Hashable {
        public var name: String
        public var arguments: [Argument]

        public init(name: String, arguments: [(name: String, signature: String)] = []) {
            self.name = name
            self.arguments = arguments.map { Argument(name: $0.name, signature: $0.signature) }
        }

        public var signature: String { arguments.map(\.signature).joined() }
    }

    /// A read-only property whose value never changes while the object is exported
    /// (`SD_BUS_VTABLE_PROPERTY_CONST`: no PropertiesChanged, clients may cache it).
    public struct Property: Sendable, Hashable {
        public var name: String
        /// The property's type; `v` holds any value.
        public var signature: String
        public var value: DBusValue

        /// A property of the value's own type.
        public init(name: String, value: DBusValue) {
            self.init(name: name, signature: value.signature, value: value)
        }

        public init(name: String, signature: String, value: DBusValue) {
            self.name = name
            self.signature = signature
            self.value = value
        }

        /// The value as appended to a reply: wrapped in a variant for a `v` property.
        var valueToSend: DBusValue {
            if signature == "v", case .variant = value { return value }
            return signature == "v" ? .variant(value) : value
        }
    }

    /// The interface name (`org.example.Thing1`).
    public var name: String
    public var methods: [Method]
    public var signals: [Signal]
    public var properties: [Property]

    public init(name: String, methods: [Method] = [], signals: [Signal] = [], properties: [Property] = []) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
    }

    /// Checks what sd-bus would refuse with a bare EINVAL, and says why.
    func validate() throws(DBusError) {
        func invalid(_ what: String) -> DBusError { .system(operation: "exportObject(\(name)): \(what)", errno: EINVAL) }
        var seen = Set<String>()
        for method in methods where !seen.insert("m" + method.name).inserted { throw invalid("method \(method.name) is declared twice") }
        for signal in signals where !seen.insert("s" + signal.name).inserted { throw invalid("signal \(signal.name) is declared twice") }
        for property in properties {
            guard seen.insert("p" + property.name).inserted else { throw invalid("property \(property.name) is declared twice") }
            guard property.signature == "v" || property.value.signature == property.signature else {
                throw invalid("property \(property.name) is declared '\(property.signature)' but its value is '\(property.value.signature)'")
            }
        }
        for method in methods {
            for argument in method.inputs + method.outputs where argument.name.isEmpty {
                throw invalid("an argument of \(method.name) has no name")
            }
        }
        for signal in signals {
            for argument in signal.arguments where argument.name.isEmpty {
                throw invalid("an argument of \(signal.name) has no name")
            }
        }
    }
}
