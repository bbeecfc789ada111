import Foundation
import Strata
import Testing
@testable import StrataEntities

/// Imports `document` into `store` and expects it refused as `EntityError.invalidInterchange`
/// (what every bad document gets; the callers then check that nothing was imported).
func expectInvalidInterchange(_ store: EntityStore<ReadWrite>, _ document: Data,
                              sourceLocation: SourceLocation = #_sourceLocation) async {
    await #expect(sourceLocation: sourceLocation) {
        try await store.importJSON(document)
    } throws: { error in
        if case EntityError.invalidInterchange = error { return true }
        return false
    }
}
