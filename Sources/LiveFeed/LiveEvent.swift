import HealthModel
import HealthStore
import Synchronization

/// One thing a live reader receives, in the order the store committed it.
public enum LiveEvent: Sendable {
    /// A new sample the reader may read.
    case sample(LiveSample)
    /// A sensor's state changed (connected, searching, battery, …).
    case state(SensorActivity)
    /// A workout the reader may read was started, took an event, ended, or was deleted.
    case workout(LiveWorkout)
    /// An event (HealthKit's category sample) the reader may read was opened, extended or ended.
    case healthEvent(HealthEvent)
    /// An event the reader may read was deleted.
    case healthEventDeleted(DeletedEvent)
    /// The reader fell behind: `missed` events were dropped, and it continues from the newest.
    case gap(missed: Int)
    /// Nothing happened for a while: fronts send a keep-alive, so a reader that vanished
    /// without a word is noticed.
    case keepalive
    /// The feed ended this reader (its permission was withdrawn, or hrmd stops): one line why.
    case ended(reason: String)
}

/// A change of a workout, as live readers get it.
public enum LiveWorkout: Sendable, Equatable {
    /// The workout as it is after the change (its events so far; no end while open).
    case changed(Workout)
    /// The workout `id` was deleted.
    case deleted(id: String)
}

/// A stored sample on its way to live readers. Each front renders its own bytes of it, once
/// for all of that front's readers: the first reader to ask renders, the others share it.
public final class LiveSample: Sendable {
    public let stored: StoredSample
    /// Who wore the strap when it was measured (the store's strap assignments), if anyone.
    /// Who wore which strap is a manager's to read: fronts name the person to managers only.
    public let person: String?
    /// The bytes each front's renderer made of it, by renderer and whether they name the person.
    private let renderings = Mutex<[RenderingKey: [UInt8]]>([:])

    private struct RenderingKey: Hashable {
        var renderer: ObjectIdentifier
        var namesPerson: Bool
    }

    public init(stored: StoredSample, person: String?) {
        self.stored = stored
        self.person = person
    }

    /// What `Renderer` makes of the sample, with its person when `namingPerson` (for a
    /// manager), rendered at the first call and shared after.
    public func rendered<Renderer: LiveSampleRenderer>(by _: Renderer.Type, namingPerson: Bool) -> [UInt8] {
        renderings.withLock { renderings in
            let named = namingPerson ? person : nil
            let key = RenderingKey(renderer: ObjectIdentifier(Renderer.self), namesPerson: named != nil)
            if let done = renderings[key] { return done }
            let bytes = Renderer.render(stored, person: named)
            renderings[key] = bytes
            return bytes
        }
    }

    /// The identifier of the device that measured it, when known.
    public var device: String? { stored.sample.device?.localIdentifier }
}

/// How one front writes a live sample (the HTTP front's JSON object): each front that sends
/// samples' bytes has one, and ``LiveSample`` keeps what it made, once per sample and form.
public protocol LiveSampleRenderer {
    /// The bytes of `stored`, naming `person` when given.
    static func render(_ stored: StoredSample, person: String?) -> [UInt8]
}

/// Who reads a live feed, as the front verified it: a source, and whether it is a manager
/// (who sees every source's samples).
public struct LiveReader: Sendable, Hashable {
    public var source: String
    public var isManager: Bool
    /// The types it follows.
    public var types: Set<SampleType>

    public init(source: String, isManager: Bool, types: Set<SampleType>) {
        self.source = source
        self.isManager = isManager
        self.types = types
    }
}
