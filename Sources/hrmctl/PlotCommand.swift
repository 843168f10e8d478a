import ArgumentParser
import StoreTransport
import CommandSupport
import Foundation
import HealthModel
import HealthStore
import HealthUnits
import Timestamps

/// `hrmctl plot`: the curve of a range, in the terminal or as an SVG file.
struct PlotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw the heart-rate curve of a range in the terminal, or as an SVG picture.",
        discussion: """
            The range is split into --width columns; each shows the average of its samples
            (a gap where there are none). --svg FILE writes the same curve as an SVG picture
            with axes and local times, for sharing.

            EXAMPLES
              hrmctl plot --since 1h
              hrmctl plot --since 2026-11-20T10:00:00Z --until 2026-11-20T11:00:00Z --svg ride.svg
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var range: RangeOptions
    @Option(help: "Columns of the terminal chart.") var width: Int = 72
    @Option(help: "Rows of the terminal chart.") var height: Int = 14
    @Option(help: ArgumentHelp("Write an SVG picture to this file instead.", valueName: "file")) var svg: String?

    func validate() throws {
        _ = try range.resolved()
        guard (10...400).contains(width), (4...100).contains(height) else { throw ValidationError("--width must be 10…400 and --height 4…100") }
    }

    func run() async throws {
        try await reportingFailures {
            let (query, unit) = try range.resolved()
            let store = try storeOptions.access()
            var points: [(time: Double, value: Double)] = []
            try await store.enumerateSamples(query) {
                points.append((time: $0.sample.start.secondsSinceEpoch, value: (try? $0.sample.quantity.doubleValue(for: unit)) ?? .nan))
            }
            guard let first = points.first, let last = points.last else {
                print("no samples")
                return
            }
            let chart = Chart(points: points, start: query.since?.secondsSinceEpoch ?? first.time, end: query.until?.secondsSinceEpoch ?? last.time)
            if let svg {
                let text = chart.svg(unit: unit.unitString, title: "\(query.type.identifier) (\(points.count) samples)")
                do {
                    try text.write(toFile: svg, atomically: true, encoding: .utf8)
                } catch {
                    throw CommandFailure("cannot write \(svg): \(error.localizedDescription)", status: .cannotCreate)
                }
                print("wrote \(svg)")
            } else {
                print(chart.terminal(width: width, height: height, unit: unit.unitString))
            }
        }
    }
}

/// Averages of a series over equal time columns, drawn as text or SVG.
struct Chart {
    let points: [(time: Double, value: Double)]
    let start: Double
    let end: Double

    /// The average value of each of `count` columns (nil where a column has no sample).
    func columns(_ count: Int) -> [Double?] {
        var sums = [Double](repeating: 0, count: count), counts = [Int](repeating: 0, count: count)
        let span = max(end - start, 1e-9)
        for point in points where point.value.isFinite {
            let column = min(count - 1, max(0, Int((point.time - start) / span * Double(count))))
            sums[column] += point.value
            counts[column] += 1
        }
        return zip(sums, counts).map { $1 > 0 ? $0 / Double($1) : nil }
    }

    func terminal(width: Int, height: Int, unit: String) -> String {
        let values = columns(width)
        let present = values.compactMap { $0 }
        guard let low = present.min(), let high = present.max() else { return "no samples" }
        let span = max(high - low, 1)
        var lines: [String] = []
        for row in (0..<height).reversed() {
            let threshold = low + span * Double(row) / Double(height - 1)
            let label = row == height - 1 ? DisplayNumber(value: high).description : row == 0 ? DisplayNumber(value: low).description : ""
            let cells = values.map { value -> Character in
                guard let value else { return " " }
                return value >= threshold - span / Double(2 * (height - 1)) ? "█" : " "
            }
            lines.append(label.padding(toLength: 6, withPad: " ", startingAt: 0) + "│" + String(cells))
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let from = formatter.string(from: Date(timeIntervalSince1970: start))
        let to = formatter.string(from: Date(timeIntervalSince1970: end))
        lines.append("      └" + String(repeating: "─", count: width))
        lines.append("       " + from + String(repeating: " ", count: max(1, width - from.count - to.count)) + to)
        lines.append("       \(unit), \(points.count) samples, local time")
        return lines.joined(separator: "\n")
    }

    func svg(unit: String, title: String) -> String {
        let (plotWidth, plotHeight, left, top) = (760.0, 260.0, 60.0, 30.0)
        let values = points.map(\.value).filter(\.isFinite)
        let low = (values.min() ?? 0).rounded(.down), high = (values.max() ?? 1).rounded(.up)
        let span = max(high - low, 1), duration = max(end - start, 1e-9)
        func x(_ time: Double) -> Double { left + (time - start) / duration * plotWidth }
        func y(_ value: Double) -> Double { top + plotHeight - (value - low) / span * plotHeight }
        let path = points.filter { $0.value.isFinite }.map { String(format: "%.1f,%.1f", x($0.time), y($0.value)) }.joined(separator: " ")
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(left + plotWidth + 20))" height="\(Int(top + plotHeight + 50))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(left))" y="18" font-size="14">\(escape(title))</text>
            <line x1="\(left)" y1="\(top + plotHeight)" x2="\(left + plotWidth)" y2="\(top + plotHeight)" stroke="#444"/>
            <line x1="\(left)" y1="\(top)" x2="\(left)" y2="\(top + plotHeight)" stroke="#444"/>

            """
        for step in 0...4 {
            let value = low + span * Double(step) / 4
            let yy = y(value)
            svg += "<line x1=\"\(left)\" y1=\"\(yy)\" x2=\"\(left + plotWidth)\" y2=\"\(yy)\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(left - 6)\" y=\"\(yy + 4)\" text-anchor=\"end\">\(DisplayNumber(value: value))</text>\n"
        }
        svg += "<text x=\"\(left)\" y=\"\(top + plotHeight + 18)\">\(escape(formatter.string(from: Date(timeIntervalSince1970: start))))</text>\n"
        svg += "<text x=\"\(left + plotWidth)\" y=\"\(top + plotHeight + 18)\" text-anchor=\"end\">\(escape(formatter.string(from: Date(timeIntervalSince1970: end))))</text>\n"
        svg += "<text x=\"\(left)\" y=\"\(top + plotHeight + 36)\" fill=\"#666\">\(escape(unit)), local time</text>\n"
        svg += "<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\" points=\"\(path)\"/>\n</svg>\n"
        return svg
    }
}
