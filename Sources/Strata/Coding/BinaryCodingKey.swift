/// Coding keys the binary coder makes up itself: element indices of unkeyed containers (for
/// coding paths in errors) and the conventional `"super"` key.
///
/// The index form computes its `stringValue` on demand, so creating one per array element
/// costs no string formatting unless an error message actually needs it.
struct BinaryCodingKey: CodingKey {
    private let name: String?
    let intValue: Int?

    init(stringValue: String) {
        self.name = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.name = nil
        self.intValue = intValue
    }

    var stringValue: String {
        name ?? "Index \(intValue ?? 0)"
    }

    static let superKey = BinaryCodingKey(stringValue: "super")
}
