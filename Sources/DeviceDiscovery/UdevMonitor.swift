import CUdev
import Foundation
@preconcurrency import Glibc
import ReaderThreads
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
        let wakeup: WakeUpPipe
        do {
            wakeup = try WakeUpPipe()
        } catch {
            throw UdevError(error.call, errno: error.errno)
        }
        for event in first { continuation.yield(event) }
        continuation.onTermination = { _ in wakeup.signal() }
        let reader = Thread { [self] in
            self.read(into: continuation, until: wakeup)
        }
        reader.name = "udev-monitor"
        reader.start()
        return stream
    }

    private func read(into continuation: AsyncStream<HotplugEvent>.Continuation, until wakeup: WakeUpPipe) {
        defer { continuation.finish() }
        let monitorFD = udev_monitor_get_fd(monitor)
        while (try? wakeup.wait(for: monitorFD)) == .readable {
            if let event = receive() { continuation.yield(event) }
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
