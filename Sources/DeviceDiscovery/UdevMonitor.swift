import CUdev
import Foundation
@preconcurrency import Glibc
import Synchronization

/// Watches udev for tty devices coming and going: a `udev_monitor` on the "udev" netlink
/// group (events after the rules ran), filtered to subsystem tty. Receiving starts in `init`,
/// so the kernel queues every event from then on; `events` hands them out as a stream, read
/// on a thread of its own so nothing waits for a plug on the cooperative pool.
public final class UdevMonitor: @unchecked Sendable {
    // Touched by the creating thread until `events` starts the reader, then only by the reader.
    private let context: UdevContext
    private let monitor: OpaquePointer
    private let started = Mutex(false)

    public init() throws(UdevError) {
        context = try UdevContext()
        guard let monitor = udev_monitor_new_from_netlink(context.handle, "udev") else {
            throw UdevError.lastError("udev_monitor_new_from_netlink")
        }
        self.monitor = monitor
        try UdevError.check(udev_monitor_filter_add_match_subsystem_devtype(monitor, "tty", nil), "udev_monitor_filter_add_match_subsystem_devtype")
        try UdevError.check(udev_monitor_enable_receiving(monitor), "udev_monitor_enable_receiving")
    }

    deinit { udev_monitor_unref(monitor) }

    /// `first`, then every add, change and remove of a tty hrmd serves (removes of any tty),
    /// until the consumer stops iterating. Call it once: a second call returns an empty stream.
    public func events(after first: [HotplugEvent] = []) throws(UdevError) -> AsyncStream<HotplugEvent> {
        let (stream, continuation) = AsyncStream<HotplugEvent>.makeStream()
        guard started.withLock({ started in
            defer { started = true }
            return !started
        }) else {
            continuation.finish()
            return stream
        }
        let wakeup = try Wakeup()
        for event in first { continuation.yield(event) }
        continuation.onTermination = { _ in wakeup.signal() }
        let reader = Thread { [self] in
            self.read(into: continuation, until: wakeup)
        }
        reader.name = "udev-monitor"
        reader.start()
        return stream
    }

    private func read(into continuation: AsyncStream<HotplugEvent>.Continuation, until wakeup: Wakeup) {
        defer { continuation.finish() }
        let monitorFD = udev_monitor_get_fd(monitor)
        var descriptors = [
            pollfd(fd: monitorFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            let monitorEvents = Int32(descriptors[0].revents)
            if monitorEvents & Int32(POLLIN) != 0, let event = receive() {
                continuation.yield(event)
            } else if monitorEvents & Int32(POLLERR | POLLHUP | POLLNVAL) != 0 {
                return
            }
        }
    }

    /// One message from the socket (nil when it was filtered out or is none of hrmd's business).
    private func receive() -> HotplugEvent? {
        guard let device = udev_monitor_receive_device(monitor) else { return nil }
        defer { udev_device_unref(device) }
        let record = UdevDeviceRecord(device)
        return HotplugEvent(action: record.action ?? "", syspath: record.syspath, device: record.hotplugDevice)
    }
}

/// A pipe that wakes the monitor's reader when the stream's consumer goes away.
final class Wakeup: Sendable {
    /// The end the reader polls.
    let descriptor: Int32
    private let writeEnd: Int32

    init() throws(UdevError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw UdevError.lastError("pipe") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    deinit {
        close(descriptor)
        close(writeEnd)
    }
}

/// The udev source for `HotplugSensors`: the monitor starts before the scan of present
/// devices, so a device plugged in during the scan is still seen (at worst twice).
public struct UdevHotplugEvents: HotplugEventSource {
    public init() {}

    public func events() throws -> AsyncStream<HotplugEvent> {
        let monitor = try UdevMonitor()
        let present = try UdevEnumerator().devices()
        return try monitor.events(after: present.map(HotplugEvent.added) + [.initialScanFinished])
    }
}
