/// Heap box that gives a large member a pointer-sized footprint inside another model.
///
/// Immutable storage: setting ``value`` allocates a new box, so copies never share mutations
/// (value semantics) and the type is `Sendable`. Equality and hashing are by value.
struct IndirectBox<Value: Hashable & Sendable>: Hashable, Sendable {
    final class Storage: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private var storage: Storage

    init(_ value: Value) { storage = Storage(value) }

    var value: Value {
        get { storage.value }
        set { storage = Storage(newValue) }
    }

    static func == (lhs: IndirectBox, rhs: IndirectBox) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.value == rhs.storage.value
    }

    func hash(into hasher: inout Hasher) { hasher.combine(storage.value) }
}

extension IndirectBox: CustomDebugStringConvertible {
    /// The boxed value's debug description, so dumps of the owning model stay readable.
    var debugDescription: String { String(reflecting: storage.value) }
}
