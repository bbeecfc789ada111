import Testing
import StrataTestFixtures
@testable import StrataCore

/// A closed handle answers what it learned at open, as `path`, `mode` and `pageSize` do:
/// `storeFormatVersion` is the format of the meta it opened, not the newest format whose page
/// checksums the store shares (a format-3 store has format 4's checksums).
@Suite struct ClosedHandleFormatTests {
    @Test func aClosedHandleReportsTheFormatItOpened() throws {
        for format: UInt32 in [2, 3] {
            let dir = TemporaryDirectory()
            try LegacyFormatStore.create(at: dir.path, formatVersion: format)
            for mode in [AccessMode.readOnly, .readWrite] {
                let db = try Database(path: dir.path, mode: mode)
                #expect(db.storeFormatVersion == format, "format \(format), \(mode), open")
                db.close()
                #expect(db.storeFormatVersion == format, "format \(format), \(mode), closed")
            }
        }
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        db.close()
        #expect(db.storeFormatVersion == Database.formatVersion)
    }
}
