import Timestamps

// Public memberwise initializers for the results the store computes, so that a client of the
// store service can rebuild them from what the service sends.

extension HeartRateVariability {
    public init(beats: Int, meanNN: Double, sdnn: Double, rmssd: Double?) {
        self.beats = beats
        self.meanNN = meanNN
        self.sdnn = sdnn
        self.rmssd = rmssd
    }
}

extension HeartRateZones {
    public init(zones: [Zone]) { self.zones = zones }
}
