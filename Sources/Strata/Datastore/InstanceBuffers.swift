/// The identifier bytes and the envelope of the instance a write stores, built in arrays that a
/// write context reuses from one write to the next: an identifier's `orderedKeyBytes` and an
/// encoded envelope were two allocations and frees of every write (~500 instructions of a typed
/// insert, callgrind).
///
/// A write takes the buffers (`take`) and gives them back (`give`); each setter replaces its
/// buffer's bytes, keeping the storage. A write does not empty them when it gives them back: the
/// arrays it handed on may still be referenced then (a parameter the optimizer has not released
/// yet), and emptying a shared array would allocate a new one. By the next write's setters
/// nothing else refers to them. So between the writes of one context the buffers hold the last
/// instance's identifier and envelope; the context empties them (`empty`) when it ends, before
/// `WriteContextReuse` keeps them, so no instance's bytes outlive its context. A write that
/// starts while another holds them (user code re-entering the datastore from an `encode(to:)`)
/// takes empty ones, so two writes never share a buffer.
struct InstanceBuffers {
    private(set) var id: [UInt8] = []
    private(set) var envelope: [UInt8] = []

    /// Buffers larger than this are not kept (`WriteContextReuse` keeps contexts' state alive).
    static let maximumKeptCapacity = 64 * 1024

    /// Bytes the buffers hold on to.
    var capacityInBytes: Int { id.capacity + envelope.capacity }

    mutating func take() -> InstanceBuffers {
        var taken = InstanceBuffers()
        swap(&taken, &self)
        return taken
    }

    mutating func give(_ buffers: inout InstanceBuffers) {
        guard buffers.capacityInBytes <= Self.maximumKeptCapacity else { return }
        swap(&buffers, &self)
    }

    /// Forgets the bytes, keeping the storage (called once nothing else refers to the arrays:
    /// when the context that holds them ends).
    mutating func empty() {
        id.removeAll(keepingCapacity: true)
        envelope.removeAll(keepingCapacity: true)
    }

    /// Sets `id` to the encoding of `identifier` (its `orderedKeyBytes`).
    mutating func setIdentifier(_ identifier: some OrderedKey) {
        id.removeAll(keepingCapacity: true)
        var writer = OrderedKeyWriter(borrowing: &id)
        identifier.encodeOrderedKey(into: &writer)
        // Nothing was lent (the buffer was empty): the bytes are the identifier's, whatever it did.
        _ = writer.returnBytes(to: &id, lent: 0)
    }

    /// Sets `envelope` to the envelope of `instance` (`InstanceEnvelope.encode`).
    mutating func setEnvelope<F: DatastoreFormat>(of instance: F.Instance, format: F.Type, currentPrefix: [UInt8]) throws {
        try InstanceEnvelope.encode(instance, format: F.self, currentPrefix: currentPrefix, into: &envelope)
    }
}
