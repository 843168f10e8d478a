@preconcurrency import Glibc

/// A caller's process as /proc shows it, pinned by a pidfd so that a recycled PID is never
/// read as the caller.
///
/// The order is what makes it safe: the PID comes from the bus daemon, the pidfd is opened
/// right after (`pidfd_open`), then the process's /proc directory; after every read through
/// that directory the pidfd must still be live. While the pinned process lives, its PID cannot
/// name another process, so a directory opened then is the pinned process's; once it exits,
/// reads through that directory fail (ESRCH) instead of reaching a newcomer.
///
/// The race that remains: the PID the bus daemon reports is the one the caller had when it
/// connected. Had that process exited and its PID been given to another before `pidfd_open`,
/// the pidfd pins the newcomer. The service narrows this by asking the bus daemon again, after
/// the reads, whether the connection is still there with the same PID (a process that exits
/// closes its connection, unless it passed the socket on to another process); it cannot close
/// it without the bus daemon's `ProcessFD` (dbus-daemon 1.15.4 and later, not 1.14).
struct PeerProcess: ~Copyable {
    enum Failure: Error, Equatable {
        /// The process has exited (or never was): nothing of it can be trusted.
        case gone
        /// Its /proc entries cannot be read by this service (another user's process hidden by
        /// `hidepid`/`ProtectProc=`, or `/proc/PID/root` needing ptrace access): errno.
        case unreadable(Int32)
    }

    /// The longest `.flatpak-info` or `cgroup` file read (Flatpak's is about 1 KiB).
    static let maximumFileSize = 64 * 1024
    private static let fuseMagic = 0x6573_5546

    let pid: pid_t
    private let pidfd: Int32
    private let directory: Int32

    init(pid: pid_t) throws(Failure) {
        guard pid > 0 else { throw .gone }
        let pidfd = hrmd_pidfd_open(pid, 0)
        guard pidfd >= 0 else {
            let code = errno
            throw code == ESRCH ? .gone : .unreadable(code)
        }
        let directory = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            let code = errno
            let alive = Self.isAlive(pidfd)
            close(pidfd)
            throw alive ? .unreadable(code) : .gone
        }
        self.pid = pid
        self.pidfd = pidfd
        self.directory = directory
    }

    deinit {
        close(directory)
        close(pidfd)
    }

    /// Throws `gone` once the pinned process has exited.
    func checkAlive() throws(Failure) {
        guard Self.isAlive(pidfd) else { throw .gone }
    }

    /// `/proc/PID/cgroup`.
    func cgroup() throws(Failure) -> String {
        let fd = openat(directory, "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw failure(errno) }
        defer { close(fd) }
        return try read(fd)
    }

    /// `/.flatpak-info` in the process's own root, or nil when it has none. Only a regular file
    /// on something other than FUSE is read (a file system a process could make block our
    /// read), and never through a symbolic link (which would resolve in the service's root).
    func flatpakInfo() throws(Failure) -> String? {
        let root = openat(directory, "root", openPath | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { throw failure(errno) }
        defer { close(root) }
        guard !Self.isFUSE(root) else { return nil }
        let located = openat(root, ".flatpak-info", openPath | O_NOFOLLOW | O_CLOEXEC)
        guard located >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { try checkAlive(); return nil }
            throw failure(code)
        }
        defer { close(located) }
        var status = stat()
        guard fstat(located, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size <= Self.maximumFileSize,
              !Self.isFUSE(located)
        else { try checkAlive(); return nil }
        let fd = open("/proc/self/fd/\(located)", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw failure(errno) }
        defer { close(fd) }
        return try read(fd)
    }

    private func read(_ fd: Int32) throws(Failure) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= Self.maximumFileSize {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(errno)
            }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        try checkAlive()
        return String(decoding: bytes.prefix(Self.maximumFileSize), as: UTF8.self)
    }

    /// What a failed read means: `gone` when the process exited meanwhile.
    private func failure(_ code: Int32) -> Failure {
        code == ESRCH || !Self.isAlive(pidfd) ? .gone : .unreadable(code)
    }

    /// A pidfd polls readable once its process has exited.
    private static func isAlive(_ pidfd: Int32) -> Bool {
        var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, 0)
            if ready < 0 && errno == EINTR { continue }
            return ready == 0
        }
    }

    /// Whether `fd` is on FUSE (or its file system cannot be told): `f_type`, the first field of
    /// Linux's `struct statfs` (120 bytes on 64-bit Linux).
    private static func isFUSE(_ fd: Int32) -> Bool {
        var info = [Int](repeating: 0, count: 32)
        let status = info.withUnsafeMutableBytes { hrmd_fstatfs(fd, $0.baseAddress!) }
        return status != 0 || info[0] == fuseMagic
    }
}

/// `O_PATH` (Linux's generic value; the Glibc module leaves it out without _GNU_SOURCE).
private let openPath: Int32 = 0o10000000

/// `fstatfs(2)` (sys/statfs.h is not in the Glibc module).
@_silgen_name("fstatfs")
private func hrmd_fstatfs(_ fd: Int32, _ buffer: UnsafeMutableRawPointer) -> Int32

/// glibc 2.36's `pidfd_open(2)` (not in the Swift Glibc module's headers).
@_silgen_name("pidfd_open")
private func hrmd_pidfd_open(_ pid: pid_t, _ flags: UInt32) -> Int32
