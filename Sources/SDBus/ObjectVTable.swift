import CSDBusVTable
import CSystemd
@preconcurrency import Glibc

/// An `sd_bus_vtable` array built from an interface description, with every string it points
/// to. sd-bus keeps pointers into both (member names, signatures, argument names) for as long
/// as the object is registered, so this must outlive the registration's slot.
final class ObjectVTable {
    /// The array, `SD_BUS_VTABLE_START` first and `SD_BUS_VTABLE_END` last.
    let entries: UnsafeMutablePointer<sd_bus_vtable>
    private let storage: UnsafeMutableRawPointer
    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// Every method gets `methodHandler`, every property `propertyGetter`; they dispatch on
    /// the member or property name.
    init(_ interface: DBusInterfaceDescription, methodHandler: sd_bus_message_handler_t, propertyGetter: sd_bus_property_get_t) {
        let count = interface.methods.count + interface.signals.count + interface.properties.count + 2
        let size = csdbus_vtable_entry_size()
        storage = UnsafeMutableRawPointer.allocate(byteCount: size * count, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: size * count)
        entries = storage.bindMemory(to: sd_bus_vtable.self, capacity: count)
        func entry(_ index: Int) -> UnsafeMutablePointer<sd_bus_vtable> {
            (storage + index * size).assumingMemoryBound(to: sd_bus_vtable.self)
        }

        var index = 0
        csdbus_vtable_start(entry(index), 0)
        index += 1
        for method in interface.methods {
            csdbus_vtable_method(
                entry(index), keep(method.name), keep(method.inputSignature), keep(method.outputSignature),
                keepNames((method.inputs + method.outputs).map(\.name)), methodHandler, csdbus_flag_unprivileged())
            index += 1
        }
        for signal in interface.signals {
            csdbus_vtable_signal(entry(index), keep(signal.name), keep(signal.signature), keepNames(signal.arguments.map(\.name)), 0)
            index += 1
        }
        for property in interface.properties {
            csdbus_vtable_property(entry(index), keep(property.name), keep(property.signature), propertyGetter, csdbus_flag_property_const())
            index += 1
        }
        csdbus_vtable_end(entry(index))
    }

    deinit {
        for string in strings { free(string) }
        storage.deallocate()
    }

    /// A C copy of `text`, freed with this vtable.
    private func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(text)!  // strdup fails only when out of memory
        strings.append(copy)
        return copy
    }

    /// Argument names as sd-bus reads them: each followed by a NUL, then one more NUL.
    private func keepNames(_ names: [String]) -> UnsafeMutablePointer<CChar> {
        var bytes: [CChar] = []
        for name in names {
            bytes += name.utf8.map { CChar(bitPattern: $0) }
            bytes.append(0)
        }
        bytes += [0, 0]
        let buffer = malloc(bytes.count)!.bindMemory(to: CChar.self, capacity: bytes.count)  // fails only when out of memory
        buffer.initialize(from: bytes, count: bytes.count)
        strings.append(buffer)
        return buffer
    }
}
