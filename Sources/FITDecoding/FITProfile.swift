/// The few global message numbers, field numbers and values of the FIT profile this module
/// reads (as in the FIT SDK's Profile.xlsx, and python-fitparse's profile.py generated from it).
enum FITProfile {
    /// Field 253 of any message: its time, a FIT `date_time`.
    static let timestampField: UInt8 = 253

    /// `file_id` (global 0): what the file is and which device wrote it.
    enum FileID {
        static let message: UInt16 = 0
        static let type: UInt8 = 0  // enum `file` (4 = activity)
        static let manufacturer: UInt8 = 1  // uint16 `manufacturer`
        static let product: UInt8 = 2  // uint16
        static let serialNumber: UInt8 = 3  // uint32z
        static let timeCreated: UInt8 = 4  // date_time
    }

    /// `session` (global 18): one sport's part of the activity, with its totals.
    enum Session {
        static let message: UInt16 = 18
        static let startTime: UInt8 = 2  // date_time
        static let sport: UInt8 = 5  // enum `sport`
        static let subSport: UInt8 = 6  // enum `sub_sport`
        static let totalElapsedTime: UInt8 = 7  // uint32, scale 1000, seconds
    }

    /// `lap` (global 19): one lap; its timestamp (253) is its end.
    enum Lap {
        static let message: UInt16 = 19
        static let startTime: UInt8 = 2  // date_time
    }

    /// `event` (global 21): among others, the timer's starts and stops (pauses).
    enum Event {
        static let message: UInt16 = 21
        static let event: UInt8 = 0  // enum `event` (0 = timer)
        static let eventType: UInt8 = 1  // enum `event_type`
        static let timer: UInt8 = 0
        /// `event_type` start; stop, stop_all, stop_disable and stop_disable_all stop the timer.
        static let start: UInt8 = 0
        static let stops: Set<UInt8> = [1, 4, 8, 9]
    }

    /// `record` (global 20): the activity's samples.
    enum Record {
        static let message: UInt16 = 20
        static let heartRate: UInt8 = 3  // uint8, bpm
    }

    /// `device_info` (global 23): the recording device and its sensors.
    enum DeviceInfo {
        static let message: UInt16 = 23
        static let deviceIndex: UInt8 = 0  // uint8 `device_index` (0 = creator)
        static let deviceType: UInt8 = 1  // uint8; its meaning depends on source_type
        static let manufacturer: UInt8 = 2  // uint16 `manufacturer`
        static let serialNumber: UInt8 = 3  // uint32z
        static let product: UInt8 = 4  // uint16
        static let softwareVersion: UInt8 = 5  // uint16, scale 100
        static let hardwareVersion: UInt8 = 6  // uint8
        static let antDeviceNumber: UInt8 = 21  // uint16z
        static let sourceType: UInt8 = 25  // enum `source_type`
        static let softwareVersionScale: Double = 100
    }

    /// `hrv` (global 78): beat-to-beat intervals.
    enum HRV {
        static let message: UInt16 = 78
        static let time: UInt8 = 0  // uint16 array, scale 1000, seconds
        static let timeScale: Double = 1000
    }

    /// `timestamp_correlation` (global 162): an absolute time for a device-relative one.
    enum TimestampCorrelation {
        static let message: UInt16 = 162
        // Field 253 (timestamp) is the UTC time at the moment of `systemTimestamp`.
        static let systemTimestamp: UInt8 = 1  // date_time, device-relative
    }

    /// Enum `source_type`: how a device_info's device is connected.
    enum SourceType {
        static let ant: UInt8 = 0
        static let antPlus: UInt8 = 1
        static let bluetoothLowEnergy: UInt8 = 3
    }

    /// `device_type` values of heart-rate monitors: the ANT+ device type (source ant or
    /// antplus) and `ble_device_type` (source bluetooth_low_energy).
    enum HeartRateDeviceType {
        static let ant: UInt8 = 120
        static let bluetoothLowEnergy: UInt8 = 1
    }
}
