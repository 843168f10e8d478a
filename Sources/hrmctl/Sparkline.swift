/// A one-line chart of recent values with block characters.
enum Sparkline {
    private static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    static func render(_ values: [Double]) -> String {
        guard let low = values.min(), let high = values.max() else { return "" }
        let span = max(high - low, 1)
        return String(values.map { value in
            blocks[min(blocks.count - 1, Int((value - low) / span * Double(blocks.count - 1) + 0.5))]
        })
    }
}
