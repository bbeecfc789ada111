/// The primitive `encode` overloads of the single-value and unkeyed encoding containers, written
/// once: each hands its value to the container's `writePrimitive`, which writes it as the
/// `BinaryPrimitive` it is (keyed containers take a key and have their own). The 128-bit
/// overloads stay in the containers: the standard library's protocols give those defaults, and
/// a second protocol-extension candidate would be ambiguous.
protocol BinaryPrimitiveEncoding {
    /// Writes `value` as the container's next (or only) value.
    mutating func writePrimitive(_ value: some BinaryPrimitive) throws
}

extension BinaryPrimitiveEncoding {
    mutating func encode(_ value: Bool) throws { try writePrimitive(value) }
    mutating func encode(_ value: String) throws { try writePrimitive(value) }
    mutating func encode(_ value: Double) throws { try writePrimitive(value) }
    mutating func encode(_ value: Float) throws { try writePrimitive(value) }
    mutating func encode(_ value: Int) throws { try writePrimitive(value) }
    mutating func encode(_ value: Int8) throws { try writePrimitive(value) }
    mutating func encode(_ value: Int16) throws { try writePrimitive(value) }
    mutating func encode(_ value: Int32) throws { try writePrimitive(value) }
    mutating func encode(_ value: Int64) throws { try writePrimitive(value) }
    mutating func encode(_ value: UInt) throws { try writePrimitive(value) }
    mutating func encode(_ value: UInt8) throws { try writePrimitive(value) }
    mutating func encode(_ value: UInt16) throws { try writePrimitive(value) }
    mutating func encode(_ value: UInt32) throws { try writePrimitive(value) }
    mutating func encode(_ value: UInt64) throws { try writePrimitive(value) }
}
