/// A structural problem found while parsing binary instance bytes.
///
/// Low-level parsers throw this lightweight, typed error (no coding path is known there);
/// containers wrap it into `DecodingError.dataCorrupted` with the path where it happened.
/// The message is only built on the failure path, so the happy path stays allocation-free.
struct BinaryFormatError: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }

    func decodingError(codingPath: [any CodingKey]) -> DecodingError {
        .dataCorrupted(DecodingError.Context(
            codingPath: codingPath,
            debugDescription: "Corrupt binary instance: \(message)"))
    }
}
