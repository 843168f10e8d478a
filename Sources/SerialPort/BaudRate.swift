import Glibc

/// The termios speed constants for the baud rates serial sensors use.
enum BaudRate {
    private static let speeds: [Int: speed_t] = [
        1200: speed_t(B1200), 2400: speed_t(B2400), 4800: speed_t(B4800), 9600: speed_t(B9600),
        19200: speed_t(B19200), 38400: speed_t(B38400), 57600: speed_t(B57600), 115200: speed_t(B115200),
        230400: speed_t(B230400), 460800: speed_t(B460800), 500000: speed_t(B500000), 576000: speed_t(B576000),
        921600: speed_t(B921600), 1000000: speed_t(B1000000),
    ]

    /// The constant for `baud`, or nil when termios has none.
    static func speed(_ baud: Int) -> speed_t? { speeds[baud] }

    /// Every supported rate, ascending (for error messages and help).
    static var supported: [Int] { speeds.keys.sorted() }
}
