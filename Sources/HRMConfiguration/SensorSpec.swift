import SensorFrames

/// One sensor source the daemon should run, as `--sensor SPEC` or a `sensor =` line names it.
public enum SensorSpec: Sendable, Hashable, CustomStringConvertible {
    /// The built-in mock strap.
    case mock(MockSensorOptions)
    /// BLE straps through BlueZ: one address, or nil for every trusted or paired strap.
    case ble(address: String?)
    /// BLE straps straight through the kernel's HCI and L2CAP sockets, without bluetoothd:
    /// adapter hciN, or nil for the first one up. The straps are those the `ble:ADDRESS`
    /// specs list (or any, with `any-strap`).
    case hci(adapter: UInt16?)
    /// ANT+ straps through an ANT USB stick: one tty, or nil for every stick udev finds.
    case ant(tty: String?)
    /// A serial heart-rate sensor speaking the line protocol: one device path, or nil for every
    /// sensor udev marks `HRMD_SENSOR=serial`.
    case serial(path: String?, baud: Int?)
    /// A recorded trace, FIT file or btsnoop capture played as if live; for a capture without
    /// its GATT discovery, the ATT handle of its Heart Rate Measurements.
    case replay(path: String, measurementHandle: UInt16? = nil)

    /// Parses `mock[:key=value,…]`, `ble[:ADDRESS]`, `hci[:hciN]`, `ant[:TTY]`,
    /// `serial[:PATH[,baud=N]]`, `replay:FILE[,handle=0xNNNN]`.
    public init(parsing text: String) throws(ConfigurationError) {
        let trimmed = text.trimmingWhitespace()
        let (kind, argument) = trimmed.splitOnce(":")
        switch kind {
        case "mock":
            self = .mock(try MockSensorOptions(parsing: argument ?? "", spec: trimmed))
        case "ble":
            guard let address = argument else { self = .ble(address: nil); return }
            guard BLEAddress.isValid(address) else {
                throw .invalidSensor(spec: trimmed, message: "'\(address)' is not a BLE address like AA:BB:CC:DD:EE:FF")
            }
            self = .ble(address: address.uppercased())
        case "hci":
            guard let adapter = argument else { self = .hci(adapter: nil); return }
            let digits = adapter.dropFirst(3)
            guard adapter.hasPrefix("hci"), !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let index = UInt16(digits) else {
                throw .invalidSensor(spec: trimmed, message: "'\(adapter)' is not an adapter name like hci0")
            }
            self = .hci(adapter: index)
        case "ant":
            guard let tty = argument else { self = .ant(tty: nil); return }
            guard tty.hasPrefix("/") else { throw .invalidSensor(spec: trimmed, message: "the ANT stick must be a device path such as /dev/ttyUSB0") }
            self = .ant(tty: tty)
        case "serial":
            guard let argument else { self = .serial(path: nil, baud: nil); return }
            guard !argument.isEmpty else {
                throw .invalidSensor(spec: trimmed, message: "serial needs a device path: serial:/dev/ttyACM0[,baud=N], or bare serial for every sensor udev finds")
            }
            let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            var baud: Int?
            for option in parts.dropFirst() {
                let (key, value) = option.splitOnce("=")
                guard key == "baud", let value, let rate = Int(value), rate > 0 else {
                    throw .invalidSensor(spec: trimmed, message: "unknown serial option '\(option)' (expected baud=N)")
                }
                baud = rate
            }
            self = .serial(path: parts[0], baud: baud)
        case "replay":
            guard let argument, !argument.isEmpty else { throw .invalidSensor(spec: trimmed, message: "replay needs a file: replay:FILE") }
            // Only a last `,handle=` is an option: any other comma belongs to the file's name.
            guard let option = argument.ranges(of: ",handle=").last else {
                self = .replay(path: argument)
                return
            }
            let value = String(argument[option.upperBound...])
            guard let handle = ATTHandleText.parse(value), option.lowerBound > argument.startIndex else {
                throw .invalidSensor(spec: trimmed, message: "replay:FILE,handle=H needs a file and an ATT handle 0x0001…0xffff, not '\(value)'")
            }
            self = .replay(path: String(argument[..<option.lowerBound]), measurementHandle: handle)
        default:
            throw .invalidSensor(spec: trimmed, message: "unknown kind '\(kind)' (expected mock, ble, hci, ant, serial or replay)")
        }
    }

    /// Whether the sensor streams waveforms (ECG, acceleration) to record.
    public var streamsWaveforms: Bool {
        if case .mock(let options) = self { return options.ecg || options.acc }
        return false
    }

    public var description: String {
        switch self {
        case .mock(let options): options.specDescription
        case .ble(let address): address.map { "ble:\($0)" } ?? "ble"
        case .hci(let adapter): adapter.map { "hci:hci\($0)" } ?? "hci"
        case .ant(let tty): tty.map { "ant:\($0)" } ?? "ant"
        case .serial(nil, _): "serial"
        case .serial(let path?, let baud): baud.map { "serial:\(path),baud=\($0)" } ?? "serial:\(path)"
        case .replay(let path, nil): "replay:\(path)"
        case .replay(let path, let handle?): "replay:\(path),handle=\(ATTHandleText.format(handle))"
        }
    }
}

/// The keys of `mock:key=value,…`.
public struct MockSensorOptions: Sendable, Hashable {
    /// Resting heart rate of the simulated wearer.
    public var bpm: Double = 62
    /// Notifications per second.
    public var hz: Double = 1
    /// Whether frames carry RR intervals.
    public var rr: Bool = true
    /// The Body Sensor Location the mock reports.
    public var location: BodySensorLocation = .chest
    /// Seed of the generator; nil picks one from the sensor's position.
    public var seed: UInt64?
    /// The device identifier; nil names it `mock-N` by position.
    public var id: String?
    /// Chance per second that the strap loses skin contact for a few seconds.
    public var contactLoss: Double?
    /// Whether the mock streams an ECG as Polar PMD frames (`ecg=on`).
    public var ecg: Bool = false
    /// Whether the mock streams acceleration as Polar PMD frames (`acc=on`).
    public var acc: Bool = false

    public init() {}

    init(parsing text: String, spec: String) throws(ConfigurationError) {
        guard !text.isEmpty else { return }
        for pair in text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            let (key, value) = pair.splitOnce("=")
            guard let value, !value.isEmpty else { throw .invalidSensor(spec: spec, message: "'\(pair)' needs a value (key=value)") }
            switch key {
            case "bpm":
                guard let bpm = Double(value), (30...220).contains(bpm) else { throw .invalidSensor(spec: spec, message: "bpm must be 30…220") }
                self.bpm = bpm
            case "hz":
                guard let hz = Double(value), hz > 0, hz <= 100 else { throw .invalidSensor(spec: spec, message: "hz must be above 0 and at most 100") }
                self.hz = hz
            case "rr":
                guard let flag = Bool(configurationValue: value) else { throw .invalidSensor(spec: spec, message: "rr must be on or off") }
                self.rr = flag
            case "location":
                guard let location = BodySensorLocation(name: value) else {
                    throw .invalidSensor(spec: spec, message: "location must be one of \(BodySensorLocation.allCases.map(\.name).joined(separator: ", "))")
                }
                self.location = location
            case "seed":
                guard let seed = UInt64(value) else { throw .invalidSensor(spec: spec, message: "seed must be a non-negative integer") }
                self.seed = seed
            case "id":
                guard value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                    throw .invalidSensor(spec: spec, message: "id may hold letters, digits, '-', '_' and '.'")
                }
                self.id = value
            case "contact-loss":
                guard let chance = Double(value), (0...1).contains(chance) else { throw .invalidSensor(spec: spec, message: "contact-loss must be 0…1") }
                self.contactLoss = chance
            case "ecg":
                guard let flag = Bool(configurationValue: value) else { throw .invalidSensor(spec: spec, message: "ecg must be on or off") }
                self.ecg = flag
            case "acc":
                guard let flag = Bool(configurationValue: value) else { throw .invalidSensor(spec: spec, message: "acc must be on or off") }
                self.acc = flag
            default:
                throw .invalidSensor(
                    spec: spec, message: "unknown mock key '\(key)' (known: bpm, hz, rr, location, seed, id, contact-loss, ecg, acc)")
            }
        }
    }

    var specDescription: String {
        var parts = ["bpm=\(bpm.formatted)", "hz=\(hz.formatted)", "rr=\(rr ? "on" : "off")", "location=\(location.name)"]
        if let seed { parts.append("seed=\(seed)") }
        if let id { parts.append("id=\(id)") }
        if let contactLoss { parts.append("contact-loss=\(contactLoss.formatted)") }
        if ecg { parts.append("ecg=on") }
        if acc { parts.append("acc=on") }
        return "mock:" + parts.joined(separator: ",")
    }
}

/// ATT attribute handles as users write them: `0x000e`, `0xE` or `14`, from 0x0001 to 0xffff.
public enum ATTHandleText {
    public static func parse(_ text: String) -> UInt16? {
        let lowered = text.lowercased()
        let value = lowered.hasPrefix("0x") ? UInt16(lowered.dropFirst(2), radix: 16) : UInt16(lowered)
        guard let value, value > 0 else { return nil }
        return value
    }

    /// `0x000e`.
    public static func format(_ handle: UInt16) -> String {
        let hex = String(handle, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// BLE device addresses (`AA:BB:CC:DD:EE:FF`).
public enum BLEAddress {
    public static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}

extension Bool {
    /// `on`/`off`, `yes`/`no`, `true`/`false`, `1`/`0`, as configuration files spell booleans.
    public init?(configurationValue text: String) {
        switch text.lowercased() {
        case "on", "yes", "true", "1": self = true
        case "off", "no", "false", "0": self = false
        default: return nil
        }
    }
}

extension Double {
    fileprivate var formatted: String { self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self) }
}

extension StringProtocol {
    /// The text before the first `separator`, and the rest (nil when there is none).
    func splitOnce(_ separator: Character) -> (String, String?) {
        guard let index = firstIndex(of: separator) else { return (String(self), nil) }
        return (String(self[..<index]), String(self[self.index(after: index)...]))
    }

    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
