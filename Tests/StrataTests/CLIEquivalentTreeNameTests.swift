import Foundation
import StrataCore
import StrataTestFixtures
import Testing

extension CLITests {
    /// `strata dump STORE TREE...` drops a repeated tree name, by bytes: "\u{212B}" and "A\u{30A}",
    /// equal by `==`, are two trees, both dumped.
    @Test func dumpNamesTwoTreesWhoseNamesAreOnlyCanonicallyEquivalent() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(path: dir.path)
            defer { db.close() }
            try db.write { tx in
                try tx.put("k", "sign", in: try tx.createTree("\u{212B}"))
                try tx.put("k", "composed", in: try tx.createTree("A\u{30A}"))
            }
        }
        let dump = try strata(["dump", dir.path, "\u{212B}", "A\u{30A}", "\u{212B}"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let trees = dump.stdoutLines.filter { $0.hasPrefix("{\"tree\":") }
        #expect(trees.count == 2, "\(dump.stdout)")
        #expect(dump.stdout.contains(Data("sign".utf8).base64EncodedString()) && dump.stdout.contains(Data("composed".utf8).base64EncodedString()),
                "\(dump.stdout)")
    }
}
