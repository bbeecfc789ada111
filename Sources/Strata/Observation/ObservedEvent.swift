/// A change to one instance, as an observer sees it.
public enum ObservedEvent<ID: Sendable, Instance: Sendable>: Sendable {
    case created(id: ID, newEntry: Instance)
    case updated(id: ID, oldEntry: Instance, newEntry: Instance)
    case deleted(id: ID, oldEntry: Instance)

    public var id: ID {
        switch self {
        case .created(let id, _), .updated(let id, _, _), .deleted(let id, _): return id
        }
    }

    /// The instance after the change (nil for a deletion).
    public var newEntry: Instance? {
        switch self {
        case .created(_, let new), .updated(_, _, let new): return new
        case .deleted: return nil
        }
    }

    /// The instance before the change (nil for a creation).
    public var oldEntry: Instance? {
        switch self {
        case .updated(_, let old, _), .deleted(_, let old): return old
        case .created: return nil
        }
    }
}
