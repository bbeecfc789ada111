import Foundation

// A model exercising every shape synthesized Codable produces, plus hand-written coding
// (super encoders, explicit nils, single-value wrappers).

enum ModelGenre: String, Codable, Hashable {
    case fiction, poetry, science
}

enum ModelPriority: Int, Codable {
    case low = -1, normal = 0, urgent = 100
}

/// Enum with associated values: synthesized as a keyed container with one nested container.
enum ModelEvent: Codable, Equatable {
    case opened
    case renamed(from: String, to: String)
    case moved(Int, shelf: String?)
    case archived(at: Date, reason: String?)
}

struct ModelAddress: Codable, Equatable {
    var street: String
    var city: String
    var postcode: String?
    var coordinates: [Double]
}

struct ModelBranch: Codable, Equatable, Hashable {
    var id: UUID
    var name: String
    var openedAt: Date
}

struct ModelEmpty: Codable, Equatable {}

/// Encodes as a bare Int through a single-value container.
struct ModelCount: Codable, Equatable {
    var value: Int

    init(_ value: Int) { self.value = value }

    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

struct ModelIntegers: Codable, Equatable {
    var i8: Int8 = .min
    var i16: Int16 = .max
    var i32: Int32 = -123_456
    var i64: Int64 = .min
    var int: Int = -1
    var u8: UInt8 = .max
    var u16: UInt16 = 0
    var u32: UInt32 = .max
    var u64: UInt64 = .max
    var uint: UInt = 1 << 40
    var i128: Int128 = .min
    var u128: UInt128 = .max
    var optionalI128: Int128? = -1
}

class ModelBase: Codable {
    var baseValue: Int

    init(baseValue: Int) { self.baseValue = baseValue }
}

/// Uses `superEncoder()`/`superDecoder()` the way hand-written subclass coding does.
final class ModelDerived: ModelBase, Equatable {
    var extra: String

    private enum CodingKeys: String, CodingKey { case extra }

    init(baseValue: Int, extra: String) {
        self.extra = extra
        super.init(baseValue: baseValue)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(extra, forKey: .extra)
        try super.encode(to: container.superEncoder())
    }

    static func == (lhs: ModelDerived, rhs: ModelDerived) -> Bool {
        lhs.baseValue == rhs.baseValue && lhs.extra == rhs.extra
    }
}

/// Writes explicit nils through every container kind.
struct ModelExplicitNils: Codable, Equatable {
    var keyed: Int?
    var list: [Int?]

    private enum CodingKeys: String, CodingKey { case keyed, list, marker }

    init(keyed: Int?, list: [Int?]) {
        self.keyed = keyed
        self.list = list
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keyed = try container.decodeNil(forKey: .keyed) ? nil : try container.decode(Int.self, forKey: .keyed)
        var unkeyed = try container.nestedUnkeyedContainer(forKey: .list)
        var list: [Int?] = []
        while !unkeyed.isAtEnd {
            list.append(try unkeyed.decodeNil() ? nil : try unkeyed.decode(Int.self))
        }
        self.list = list
        let marker = try container.superDecoder(forKey: .marker).singleValueContainer()
        guard marker.decodeNil() else {
            throw DecodingError.dataCorruptedError(in: marker, debugDescription: "marker should be nil")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let keyed { try container.encode(keyed, forKey: .keyed) } else { try container.encodeNil(forKey: .keyed) }
        var unkeyed = container.nestedUnkeyedContainer(forKey: .list)
        for element in list {
            if let element { try unkeyed.encode(element) } else { try unkeyed.encodeNil() }
        }
        var marker = container.superEncoder(forKey: .marker).singleValueContainer()
        try marker.encodeNil()
    }
}

struct ModelLibrary: Codable, Equatable {
    var id: UUID
    var name: String
    var founded: Date
    var logo: Data
    var website: URL
    var budget: Decimal
    var rating: Double
    var ratingFloat: Float
    var isOpen: Bool
    var integers: ModelIntegers
    var tags: [String]
    var note: String?
    var visitorCount: Int?
    var address: ModelAddress
    var previousAddress: ModelAddress?
    var branches: [ModelBranch]
    var branchesByName: [String: ModelBranch]
    var titlesByShelf: [Int: String]
    var loansByBranch: [UUID: Int]
    var genreCounts: [ModelGenre: Int]
    var genre: ModelGenre
    var priority: ModelPriority
    var events: [ModelEvent]
    var matrix: [[Int]]
    var sparse: [Int?]
    var keywords: Set<String>
    var empty: ModelEmpty
    var count: ModelCount
    var derived: ModelDerived
    var explicitNils: ModelExplicitNils
    var nothing: [String]

    static func sample() -> ModelLibrary {
        let branchA = ModelBranch(id: UUID(), name: "Central", openedAt: Date(timeIntervalSince1970: -86_400 * 365 * 30))
        let branchB = ModelBranch(id: UUID(), name: "Riverside 🌊", openedAt: Date(timeIntervalSinceReferenceDate: 12.5))
        return ModelLibrary(
            id: UUID(),
            name: "Strata Public Library",
            founded: Date(timeIntervalSince1970: -2_208_988_800.25),
            logo: Data([0, 1, 2, 0xFF, 0, 0x80]),
            website: URL(string: "https://example.org/library?x=1#top")!,
            budget: Decimal(string: "12345678.901")!,
            rating: -4.75,
            ratingFloat: .pi,
            isOpen: true,
            integers: ModelIntegers(),
            tags: ["books", "", "a\0b", String(repeating: "long ", count: 60)],
            note: nil,
            visitorCount: 0,
            address: ModelAddress(street: "1 Main St", city: "Springfield", postcode: nil, coordinates: [51.5, -0.12]),
            previousAddress: ModelAddress(street: "Old Rd", city: "Shelbyville", postcode: "SH1", coordinates: []),
            branches: [branchA, branchB],
            branchesByName: ["central": branchA, "riverside": branchB, "": branchA],
            titlesByShelf: [1: "Dune", -7: "Emma", 1000: "Ulysses"],
            loansByBranch: [branchA.id: 3, branchB.id: 9],
            genreCounts: [.fiction: 10, .poetry: 2, .science: 7],
            genre: .poetry,
            priority: .urgent,
            events: [
                .opened, .renamed(from: "Old", to: "New"), .moved(3, shelf: nil), .moved(-4, shelf: "B2"),
                .archived(at: Date(timeIntervalSinceReferenceDate: 1e9), reason: "done"),
            ],
            matrix: [[1, 2, 3], [], [-1]],
            sparse: [1, nil, 3, nil],
            keywords: ["alpha", "beta", "gamma", "delta"],
            empty: ModelEmpty(),
            count: ModelCount(42),
            derived: ModelDerived(baseValue: 7, extra: "subclass"),
            explicitNils: ModelExplicitNils(keyed: nil, list: [nil, 5, nil]),
            nothing: [])
    }
}
