import HealthRequests
import CommandSupport
import Foundation
import HealthClient
import HealthModel
import HealthStore
import HealthWire
import SDBus
import TestSupport
import Testing

@testable import StoreTransport

@Suite("Requests over a store file, and what the service's answers become", .timeLimit(.minutes(HangBound.suiteMinutes)))
struct StoreTransportTests {
    private func fileStore() throws -> (FileTransport, TemporaryDirectory) {
        let directory = try TemporaryDirectory(prefix: "hrmd-clistore")
        let store = try HealthStore.open(path: directory.file("s.sqlite"), mode: .createIfMissing)
        return (FileTransport(store: store), directory)
    }

    @Test("auth requests on a file: a source that asked and was not answered, until it is")
    func pendingRequestsOnAFile() async throws {
        let (access, directory) = try fileStore()
        _ = directory
        #expect(try await access.pendingRequests().isEmpty)
        _ = try access.store.requestAuthorization(source: "root/zeta", toShare: [.heartRate, .rrInterval])
        _ = try access.store.requestAuthorization(source: "root/alpha", toShare: [.heartRate])
        try await access.setAuthorization(.sharingAuthorized, source: "hrmd", type: .heartRate, access: .share)
        #expect(try await access.pendingRequests() == [
            AuthorizationRequest(source: "root/alpha", type: .heartRate, access: .share),
            AuthorizationRequest(source: "root/zeta", type: .heartRate, access: .share),
            AuthorizationRequest(source: "root/zeta", type: .rrInterval, access: .share),
        ])
        try await access.setAuthorization(.sharingDenied, source: "root/zeta", type: .heartRate, access: .share)
        try await access.setAuthorization(.sharingAuthorized, source: "root/alpha", type: .heartRate, access: .share)
        #expect(try await access.pendingRequests() == [AuthorizationRequest(source: "root/zeta", type: .rrInterval, access: .share)])
        // A read answer is an answer, not a request.
        try await access.setAuthorization(.sharingAuthorized, source: "root/zeta", type: .rrInterval, access: .read)
        #expect(try await access.authorizations().first { $0.source == "root/zeta" && $0.type == .rrInterval }?.read == .sharingAuthorized)
    }

    @Test("the service's (source, type, access, status) entries fold into the file's rows, in its order")
    func serviceEntriesFold() {
        let records: [AuthorizationAccessEntry] = [
            .init(source: "root/app", type: .rrInterval, access: .read, status: .notDetermined),
            .init(source: "hrmd", type: .heartRate, access: .share, status: .sharingAuthorized),
            .init(source: "root/app", type: .heartRate, access: .share, status: .sharingDenied),
            .init(source: "root/app", type: .heartRate, access: .read, status: .notDetermined),
            .init(source: "Zed", type: .heartRate, access: .share, status: .notDetermined),
        ]
        #expect(AuthorizationOrder.rows(from: records) == [
            AuthorizationEntry(source: "Zed", type: .heartRate, share: .notDetermined, read: .notDetermined),
            AuthorizationEntry(source: "hrmd", type: .heartRate, share: .sharingAuthorized, read: .notDetermined),
            AuthorizationEntry(source: "root/app", type: .heartRate, share: .sharingDenied, read: .notDetermined),
            AuthorizationEntry(source: "root/app", type: .rrInterval, share: .notDetermined, read: .notDetermined),
        ])
        #expect(AuthorizationRequest.pending(in: records) == [
            AuthorizationRequest(source: "Zed", type: .heartRate, access: .share),
            AuthorizationRequest(source: "root/app", type: .heartRate, access: .read),
            AuthorizationRequest(source: "root/app", type: .rrInterval, access: .read),
        ])
    }

    @Test("an empty file: no zones, no variability, no statistics, no changes within the deadline")
    func emptyFile() async throws {
        let (access, directory) = try fileStore()
        _ = directory
        #expect(try await access.heartRateZones(since: nil, until: nil, maximumHeartRate: 190).isEmpty)
        #expect(try await access.heartRateVariability(since: nil, until: nil) == nil)
        #expect(try await access.statistics(of: .heartRate, by: .minute, since: nil, until: nil).isEmpty)
        var calls = 0
        try await access.followChanges(of: .heartRate, pollInterval: 0.05, until: .now.advanced(by: .milliseconds(200))) { _ in calls += 1 }
        #expect(calls == 0)
    }

    @Test("D-Bus errors become the documented exit statuses, in one line")
    func errorMapping() {
        func failure(_ name: String) -> CommandFailure {
            HealthServiceError(.remote(name: name, message: "said \(name)"), member: "Test").commandFailure
        }
        #expect(failure(HealthBusError.serviceUnknown).status == .unavailable)
        #expect(failure(HealthBusError.serviceUnknown).message == HealthServiceError.notRunningLine)
        #expect(failure(HealthBusError.nameHasNoOwner).status == .unavailable)
        #expect(failure(HealthBusError.accessDenied).status == .permissionDenied)
        #expect(failure(HealthBusError.accessDenied).message.contains("manager"))
        #expect(failure(HealthBusError.accessDenied).message.contains("group hrmd"))
        #expect(failure(HealthBusError.invalidArgs).status == .usage)
        #expect(failure(HealthBusError.notAuthorized).status == .permissionDenied)
        #expect(failure(HealthBusError.badData).status == .dataError)
        #expect(failure(HealthBusError.failed).status == .failure)
        #expect(failure(HealthBusError.limitsExceeded).status == .failure)
        #expect(failure("org.freedesktop.DBus.Error.NoReply").status == .failure)
        #expect(HealthServiceError(.system(operation: "sd_bus_open_system", errno: 2), member: "connect").commandFailure.status == .unavailable)
        #expect(HealthServiceError(.disconnected, member: "Test").commandFailure.status == .unavailable)
        #expect(!HealthServiceError.notRunningLine.contains("\n"))
    }

    @Test("with nobody owning org.hrmd.Health every call is 'not running', and the sample pipe's reader ends")
    func nobodyAnswers() async throws {
        let bus = try await PrivateBus()
        let client = HealthServiceClient(connection: try DBusConnection.connect(address: bus.address))
        await #expect(throws: HealthServiceError.self) { try await client.currentAnchor() }
        do {
            _ = try await client.querySamplesToFile(of: .heartRate) { _ in }
            Issue.record("QuerySamplesToFile answered without a service")
        } catch {
            guard case .notRunning = error else { Issue.record("\(error)"); return }
        }
        do {
            _ = try await client.watch(.heartRate)
            Issue.record("watch started without a service")
        } catch {
            guard case .notRunning = error else { Issue.record("\(error)"); return }
        }
    }
}
