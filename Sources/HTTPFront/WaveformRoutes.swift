import HealthModel
import HealthRequests
import JSONLines
import Timestamps

/// The routes of waveform recordings (ECG, acceleration), under `/api/v1/waveforms`: each
/// serves one waveform request and answers in `hrmctl ecg list`'s shape ([WaveformJSON]).
extension APIRoute {
    static let waveforms: [APIRoute] = [
        APIRoute(.get, "waveforms", parameters: ["since", "until", "type", "device", "limit"], serves: Waveforms.name) { _, query, caller, _ in
            var request = Waveforms(
                app: caller.app, since: try query.time("since"), until: try query.time("until"), type: nil, device: query.string("device"),
                limit: Int(try query.unsigned("limit") ?? 100))
            // The type as named: the request checks it.
            request.type = query.string("type") ?? ""
            let answer = try await serve(request, as: caller)
            return .object([("recordings", .array(answer.recordings.map(WaveformJSON.object)))])
        },
        APIRoute(.get, "waveforms/samples", parameters: ["id", "since", "until"], serves: WaveformSamples.name) { _, query, caller, _ in
            guard let id = query.string("id") else { throw RequestFailure.invalidArguments("name the recording: ?id=ID") }
            let answer = try await serve(
                WaveformSamples(app: caller.app, id: id, since: try query.time("since"), until: try query.time("until")), as: caller)
            var members: [(String, JSONValue)] = [
                ("recording", WaveformJSON.object(answer.recording)),
                ("segments", .array(answer.segments.map(WaveformJSON.object))),
            ]
            if answer.next != 0 { members.append(("next", .string(RFC3339.string(from: Timestamp(microsecondsSinceEpoch: answer.next))))) }
            return .object(members)
        },
        APIRoute(.delete, "waveforms", parameters: ["id"], serves: DeleteWaveform.name) { _, query, caller, _ in
            guard let id = query.string("id") else { throw RequestFailure.invalidArguments("name the recording: ?id=ID") }
            _ = try await serve(DeleteWaveform(app: caller.app, id: id), as: caller)
            return .object([("deleted", .string(id))])
        },
    ]
}
