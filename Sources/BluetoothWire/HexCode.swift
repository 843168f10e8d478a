/// `value` as the Core spec writes opcodes, handles and codes: lowercase hex, zero-padded to
/// the width of its type (`0x0a` for a byte, `0x002a` and `0x200c` for 16 bits).
public func hexCode(_ value: some FixedWidthInteger & UnsignedInteger) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, value.bitWidth / 4 - digits.count)) + digits
}
