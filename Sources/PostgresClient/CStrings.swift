import Glibc

/// Arrays of C strings for libpq's parameter arrays, freed after use.
enum CStrings {
    /// Calls `body` with a NULL-terminated array of copies of `strings` (nil stays NULL).
    static func with<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    static func with<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        with(strings.map { Optional($0) }, body)
    }
}
