import Foundation
import TestSupport
import Testing

@Suite("hrmctl end to end")
struct HRMCtlEndToEndTests {
    @Test("decode prints the contract's JSON for 2a37 and 2a38")
    func decode() async throws {
        let harness = try Harness()
        let full = try await harness.hrmctl("decode", "1e55320020004000", "--output", "json")
        #expect(full.exitCode == 0, "\(full.stderr)")
        #expect(full.stdout == #"{"heartRate":85,"sensorContact":"detected","energyExpended":50,"rrIntervals":[0.03125,0.0625]}"# + "\n")
        let plain = try await harness.hrmctl("decode", "0048", "--output", "json")
        #expect(plain.stdout == #"{"heartRate":72,"sensorContact":"unsupported","energyExpended":null,"rrIntervals":[]}"# + "\n")
        let location = try await harness.hrmctl("decode", "--characteristic", "2a38", "01", "--output", "json")
        #expect(location.stdout == #"{"sensorLocation":"chest"}"# + "\n")
        let text = try await harness.hrmctl("decode", "16 4a 00 04")
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("74 count/min"))
    }

    @Test("malformed values are exit 65 with one line", arguments: ["zz", "1", "", "11", "0148", "104800"])
    func decodeMalformed(hex: String) async throws {
        let harness = try Harness()
        let result = try await harness.hrmctl(["decode", hex])
        #expect(result.exitCode == 65)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.hasPrefix("hrmctl: "))
    }

    @Test("decode --pmd prints one PMD frame's samples as the contract's JSON line; a frame that does not decode is exit 65 with one line")
    func decodePMD() async throws {
        let harness = try Harness()
        // polar-ble-sdk's EcgDataTest "process raw ecg data type 0": two int24 samples, stamped 2 s after 2000-01-01.
        let ecg = try await harness.hrmctl("decode", "--pmd", "00 0094357700000000 00 0280ff 028000")
        #expect(ecg.exitCode == 0, "\(ecg.stderr)")
        #expect(ecg.stdout == #"{"type":"ecg","timestamp_ns":2000000000,"microvolts":[-32766,32770]}"# + "\n")
        // Its AccDataTest "process acc raw data frame type 1": int16 x, y, z in mG.
        let acc = try await harness.hrmctl("decode", "--pmd", "02 0094357700000000 01 f7ffffffe703 f8fffeffe503")
        #expect(acc.stdout == #"{"type":"acc","timestamp_ns":2000000000,"millig":[[-9,-1,999],[-8,-2,997]]}"# + "\n", "\(acc.stderr)")
        // A stamp past 2^53 ns is printed exactly.
        let late = try await harness.hrmctl("decode", "--pmd", "00 ffffffffffffff00 00 000000")
        #expect(late.stdout.contains(#""timestamp_ns":72057594037927935,"#), "\(late.stdout)")
        for (hex, reason) in [("00", "the frame header is cut short"), ("00009435770000000000 02", "the last sample is cut short"),
                              ("09009435770000000000 02", "measurement type 9"), ("zz", "malformed hex")] {
            let bad = try await harness.hrmctl("decode", "--pmd", hex)
            #expect(bad.exitCode == 65 && bad.stderr.split(separator: "\n").count == 1 && bad.stderr.contains(reason), "\(hex): \(bad.stderr)")
        }
    }

    @Test("usage errors are exit 64: unknown type, incompatible unit, bad WHEN")
    func usageErrors() async throws {
        let harness = try Harness()
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "heart-rate")
        for arguments in [
            ["samples", "--unit", "kg"], ["samples", "--type", "steps"], ["samples", "--since", "yesterday"],
            ["samples", "--since", "1h", "--until", "2h"], ["auth", "grant", "hrmd", "nope"], ["frobnicate"],
        ] {
            let result = try await harness.hrmctl(arguments)
            #expect(result.exitCode == 64, "\(arguments): \(result.stderr)")
        }
    }

    @Test("a missing store file is exit 66; without one and no store service, exit 69 names the flag")
    func missingStore() async throws {
        let harness = try Harness()
        let missing = try await harness.hrmctl(["samples", "--store", harness.directory.file("none.sqlite")], withStore: false)
        #expect(missing.exitCode == 66)
        #expect(missing.stderr.contains("no store at"))
        var noService = harness.environment
        noService["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(harness.directory.file("no-bus"))"
        let system = try await ChildProcess.run(BuiltProducts.hrmctl, ["samples"], environment: noService, in: harness.directory)
        #expect(system.exitCode == 69)
        #expect(system.stderr.contains("--store"))
    }

    @Test("types lists heart-rate with count/min; auth list shows grants; units convert")
    func typesAuthAndUnits() async throws {
        let harness = try Harness()
        let types = try await harness.hrmctl("types", "--output", "json")
        #expect(types.stdout.contains(#"{"type":"heart-rate","unit":"count/min","aggregation":"discrete""#))
        _ = try await harness.hrmctl("auth", "grant", "hrmd", "all")
        let list = try await harness.hrmctl("auth", "list")
        #expect(list.stdout.contains("sharingAuthorized"))
        let daemon = try await ChildProcess.run(
            BuiltProducts.hrmd, ["--store", harness.store, "--sensor", "mock:hz=10,bpm=60", "--duration", "2"],
            environment: harness.environment, in: harness.directory)
        #expect(daemon.exitCode == 0)
        let perMinute = try await harness.hrmctl("samples", "--output", "json")
        let perSecond = try await harness.hrmctl("samples", "--output", "json", "--unit", "count/s")
        let minuteValues = perMinute.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let secondValues = perSecond.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!minuteValues.isEmpty && minuteValues.count == secondValues.count)
        for (a, b) in zip(minuteValues, secondValues) {
            let bpm = try #require(a["value"] as? Double)
            let hz = try #require(b["value"] as? Double)
            #expect(abs(bpm / 60 - hz) < 1e-6)
            #expect(b["unit"] as? String == "count/s")
        }
        let csv = try await harness.hrmctl("samples", "--output", "csv")
        #expect(csv.stdout.hasPrefix("type,start,end,value,unit,source,device"))
        let rr = try await harness.samples(type: "rr-interval")
        #expect(!rr.isEmpty)
        #expect(rr.allSatisfy { $0["unit"] as? String == "ms" })
    }

    @Test("--config no longer chooses hrmctl's store (that is the service's); it is still checked; --store wins")
    func configNoLongerChoosesStore() async throws {
        let harness = try Harness()
        let config = harness.directory.file("hrmd.conf")
        try "[hrmd]\nstore = \(harness.store)\n".write(toFile: config, atomically: true, encoding: .utf8)
        var noService = harness.environment
        noService["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(harness.directory.file("no-bus"))"
        let viaConfig = try await ChildProcess.run(
            BuiltProducts.hrmctl, ["auth", "grant", "hrmd", "heart-rate", "--config", config], environment: noService, in: harness.directory)
        #expect(viaConfig.exitCode == 69, "\(viaConfig.stderr)")
        #expect(!FileManager.default.fileExists(atPath: harness.store))
        let other = harness.directory.file("other.sqlite")
        let flagWins = try await harness.hrmctl(["auth", "list", "--config", config, "--store", other], withStore: false)
        #expect(flagWins.exitCode == 66)
        let badConfig = harness.directory.file("bad.conf")
        try "[hrmd]\nstor = /x\n".write(toFile: badConfig, atomically: true, encoding: .utf8)
        let bad = try await harness.hrmctl(["auth", "list", "--config", badConfig], withStore: false)
        #expect(bad.exitCode == 64)
        #expect(bad.stderr.contains("bad.conf:2: key 'stor'"))
    }
}
