import Foundation
import StrataCore

extension DatastoreWriter {
    /// Records the shape of `instance` in `<name>#info` while this process still samples (the
    /// first writes of each datastore per process; binary formats only), merged with what is
    /// recorded already. Costs one atomic load per write once sampling is over.
    func recordShape(of instance: F.Instance) throws {
        guard F.coding == .binary, schema.shapeSamplesLeft.load(ordering: .relaxed) > 0,
              schema.shapeSamplesLeft.subtract(1, ordering: .relaxed).newValue >= 0,
              let shape = InstanceShapeRecorder.shape(of: instance) else { return }
        let info = try writeContext.writableTree(layout.info)
        let prefix = schema.currentEnvelopePrefix
        let stored = try StoredInstanceShape.stored(in: info, of: write)
        let merged = stored.flatMap { $0.prefix == prefix ? $0.shape.merged(with: shape) : nil } ?? shape
        guard stored != StoredInstanceShape(prefix: prefix, shape: merged) else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try write.put(StoredInstanceShape.key, Array(try encoder.encode(StoredInstanceShape(prefix: prefix, shape: merged))), in: info)
    }
}
