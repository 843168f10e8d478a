import HealthModel
/// What an application sees of sample ids and anchors: a keyed permutation of the 64-bit
/// numbers, so that an application can keep them and hand anchors back, but learns nothing
/// from them about the samples it may not read. The store numbers every stored sample and
/// every deletion in one sequence across all sources; the plain numbers would tell an
/// application how many samples were stored between two of its own, and so the heart rate of
/// a strap it may not read (HKQueryAnchor is opaque for the same reason). Managers, who may
/// read everything, get the plain numbers.
///
/// The permutation is a 6-round Feistel network on two 32-bit halves whose round function is
/// SipHash-2-4 (Aumasson and Bernstein's keyed hash for short inputs) under the store's
/// 16-byte secret, which only the service's user can read: a token cannot be told from a
/// random number without the secret, and the same store gives the same tokens after a restart.
public struct AnchorTokens: Sendable {
    private let k0: UInt64
    private let k1: UInt64
    private static let rounds: UInt64 = 6

    /// Tokens under `secret` (16 bytes).
    public init(secret: [UInt8]) {
        precondition(secret.count == 16, "the service secret is 16 bytes")
        k0 = Self.littleEndian(secret[0..<8])
        k1 = Self.littleEndian(secret[8..<16])
    }

    /// The token of a plain number. 0 (the beginning, or nothing yet) stays 0.
    public func token(_ plain: Int64) -> UInt64 {
        guard plain != 0 else { return 0 }
        var left = UInt32(truncatingIfNeeded: UInt64(bitPattern: plain) >> 32)
        var right = UInt32(truncatingIfNeeded: UInt64(bitPattern: plain))
        for round in 0..<Self.rounds {
            (left, right) = (right, left ^ roundValue(round, right))
        }
        return UInt64(left) << 32 | UInt64(right)
    }

    /// The plain number of a token this service gave (any other number decodes to some
    /// number, as with any permutation: the store then answers for that anchor).
    public func plain(_ token: UInt64) -> Int64 {
        guard token != 0 else { return 0 }
        var left = UInt32(truncatingIfNeeded: token >> 32)
        var right = UInt32(truncatingIfNeeded: token)
        for round in (0..<Self.rounds).reversed() {
            (left, right) = (right ^ roundValue(round, left), left)
        }
        return Int64(bitPattern: UInt64(left) << 32 | UInt64(right))
    }

    /// A sample id as an application sees it (`x` on the wire).
    public func id(_ plain: Int64) -> Int64 { Int64(bitPattern: token(plain)) }

    private func roundValue(_ round: UInt64, _ half: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: siphash(round << 32 | UInt64(half)))
    }

    /// SipHash-2-4 of one 8-byte message.
    func siphash(_ message: UInt64) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 &+= v1; v1 = v1.rotatedLeft(13); v1 ^= v0; v0 = v0.rotatedLeft(32)
            v2 &+= v3; v3 = v3.rotatedLeft(16); v3 ^= v2
            v0 &+= v3; v3 = v3.rotatedLeft(21); v3 ^= v0
            v2 &+= v1; v1 = v1.rotatedLeft(17); v1 ^= v2; v2 = v2.rotatedLeft(32)
        }
        for block in [message, UInt64(8) << 56] {
            v3 ^= block
            round()
            round()
            v0 ^= block
        }
        v2 ^= 0xFF
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }

    private static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
