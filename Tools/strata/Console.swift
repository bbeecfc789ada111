import Foundation
import Glibc

/// Terminal output: text on stdout, one-line errors on stderr, progress only on a terminal.
enum Console {
    /// Text for a person or a pipe (stdout, buffered).
    static func write(_ text: String) {
        print(text, terminator: "")
    }

    static func line(_ text: String = "") {
        print(text)
    }

    /// Pushes buffered stdout out now (for live output such as `watch`).
    static func flush() {
        fflush(nil)
    }

    /// `strata: <message>` on stderr: every failure is one line a person can act on.
    static func error(_ message: String) {
        flush()
        let single = message.replacingOccurrences(of: "\n", with: " ")
        writeAll(2, Array("strata: \(single)\n".utf8))
    }

    /// Notes for a person that must not mix into piped data (stderr).
    static func note(_ message: String) {
        writeAll(2, Array("\(message)\n".utf8))
    }

    /// Writes all of `bytes` to `descriptor`; a failure is dropped (there is nowhere left to report it).
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in _ = try? ByteSink(descriptor: descriptor, name: "descriptor \(descriptor)").write(raw) }
    }

    /// Whether stderr is a terminal (progress bars are drawn only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal and at most ten times a
/// second; `finish()` erases it so the command's own output starts on a clean line.
final class ProgressBar {
    private let label: String
    private let enabled: Bool
    private var lastDraw: UInt64 = 0
    private var drawn = false

    init(_ label: String, enabled: Bool = Console.stderrIsTerminal) {
        self.label = label
        self.enabled = enabled
    }

    func update(_ done: UInt64, of total: UInt64, detail: String = "") {
        guard enabled else { return }
        let now = monotonicNanoseconds()
        guard now - lastDraw >= 100_000_000 || !drawn else { return }
        lastDraw = now
        drawn = true
        let fraction = total == 0 ? 0 : min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let percent = String(Int(fraction * 100))
        let text = "\r\u{1B}[K\(label) [\(bar)] \(String(repeating: " ", count: 3 - percent.count))\(percent)%\(detail.isEmpty ? "" : "  " + detail)"
        Console.writeAll(2, Array(text.utf8))
    }

    func finish() {
        guard enabled, drawn else { return }
        Console.writeAll(2, Array("\r\u{1B}[K".utf8))
        drawn = false
    }
}

// MARK: Clocks

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Nanoseconds since 1970: the clock commit times are stamped with.
func wallNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

// MARK: Formatting

/// 1234567 → "1,234,567".
func grouped<T: BinaryInteger>(_ value: T) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (offset, character) in digits.enumerated() {
        if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return (value < 0 ? "-" : "") + result
}

/// 1536 → "1.5 KiB".
func byteCount<T: BinaryInteger>(_ value: T) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var amount = Double(value)
    var unit = 0
    while amount >= 1024 && unit < units.count - 1 {
        amount /= 1024
        unit += 1
    }
    if unit == 0 { return "\(value) B" }
    return String(format: amount < 10 ? "%.1f" : "%.0f", amount) + " " + units[unit]
}

/// Seconds → "85 µs", "1.2 ms", "3.4 s", "2 min 5 s".
func duration(_ seconds: Double) -> String {
    if seconds < 0 { return "-" + duration(-seconds) }
    if seconds < 1e-3 { return String(format: "%.0f µs", seconds * 1e6) }
    if seconds < 1 { return String(format: seconds < 0.01 ? "%.2f ms" : "%.1f ms", seconds * 1e3) }
    if seconds < 120 { return String(format: "%.1f s", seconds) }
    if seconds < 7200 { return "\(Int(seconds) / 60) min \(Int(seconds) % 60) s" }
    return "\(Int(seconds) / 3600) h \(Int(seconds) % 3600 / 60) min"
}

/// A UTC timestamp for nanoseconds since 1970.
func timestamp(_ nanoseconds: UInt64) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
    return formatter.string(from: Date(timeIntervalSince1970: Double(nanoseconds) / 1e9))
}

/// Rows under a header (all-empty: none), columns padded; `right` lists the columns aligned right.
func table(_ header: [String], _ rows: [[String]], right: Set<Int> = [], indent: String = "  ") -> String {
    // An all-empty header is no header.
    let all = header.allSatisfy(\.isEmpty) ? rows : [header] + rows
    guard !all.isEmpty else { return "" }
    let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
    var text = ""
    for row in all {
        var line = indent
        for (column, cell) in row.enumerated() {
            let padding = String(repeating: " ", count: widths[column] - cell.count)
            let isLast = column == row.count - 1
            line += right.contains(column) ? padding + cell : cell + (isLast ? "" : padding)
            if !isLast { line += "  " }
        }
        text += line + "\n"
    }
    return text
}

/// "1 problem", "3 problems".
func plural(_ count: some BinaryInteger, _ singular: String, _ pluralForm: String? = nil) -> String {
    "\(grouped(count)) \(count == 1 ? singular : pluralForm ?? singular + "s")"
}
