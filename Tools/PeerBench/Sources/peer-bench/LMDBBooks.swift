// The typed workload on LMDB, about what Empire generates with macros: books keyed by their
// 16-byte id with a hand-written binary row (u32-length-prefixed title, author and isbn, then
// pages as i64 and published as f64), a title index (MDB_DUPSORT: title -> ids) and a unique
// isbn index (isbn -> id). Persisting reads the old row and rewrites index entries only when
// their value changed (compared as bytes, without decoding the old row). Reads reuse one read
// transaction with mdb_txn_reset/renew (LMDB's fastest idiom); each load is still its own snapshot.
import CLMDB
import Foundation
import Glibc
import StrataBenchKit

final class LMDBBookStore: BookStore {
    private var env: OpaquePointer?
    private var books: MDB_dbi = 0
    private var titles: MDB_dbi = 0
    private var isbns: MDB_dbi = 0
    private var reader: OpaquePointer?

    init(path: String, durability: BookDurability) {
        mkdir(path, 0o755)
        LMDB.check(mdb_env_create(&env), "mdb_env_create")
        LMDB.check(mdb_env_set_mapsize(env, LMDBStore.mapSize), "mdb_env_set_mapsize")
        LMDB.check(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
        LMDB.check(mdb_env_open(env, path, durability == .full ? 0 : UInt32(MDB_NOSYNC), 0o644), "mdb_env_open \(path)")
        var txn: OpaquePointer?
        LMDB.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        let create = UInt32(MDB_CREATE)
        LMDB.check(mdb_dbi_open(txn, "books", create, &books), "mdb_dbi_open books")
        LMDB.check(mdb_dbi_open(txn, "titles", create | UInt32(MDB_DUPSORT), &titles), "mdb_dbi_open titles")
        LMDB.check(mdb_dbi_open(txn, "isbns", create, &isbns), "mdb_dbi_open isbns")
        LMDB.check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    // MARK: Rows

    private static func encode(_ book: BenchBook) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(book.title.utf8.count + book.author.utf8.count + book.isbn.utf8.count + 28)
        for text in [book.title, book.author, book.isbn] {
            withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: text.utf8)
        }
        withUnsafeBytes(of: Int64(book.pages).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: book.published.timeIntervalSince1970.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The three strings and two numbers of a row, bounds-checked.
    private static func decode(_ row: UnsafeRawBufferPointer, id: UUID) -> BenchBook {
        var offset = 0
        func text() -> String {
            guard offset + 4 <= row.count else { BenchMain.fatal("lmdb: short row") }
            let count = Int(UInt32(littleEndian: row.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard offset + 4 + count <= row.count else { BenchMain.fatal("lmdb: short row") }
            defer { offset += 4 + count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: row[(offset + 4)..<(offset + 4 + count)]), as: UTF8.self)
        }
        let title = text(), author = text(), isbn = text()
        guard offset + 16 <= row.count else { BenchMain.fatal("lmdb: short row") }
        let pages = Int64(littleEndian: row.loadUnaligned(fromByteOffset: offset, as: Int64.self))
        let published = Double(bitPattern: UInt64(littleEndian: row.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
        return BenchBook(id: id, title: title, author: author, isbn: isbn, pages: Int(pages),
                         published: Date(timeIntervalSince1970: published))
    }

    private static func id(from value: MDB_val) -> UUID {
        guard value.mv_size == 16 else { BenchMain.fatal("lmdb: index entry is not an id") }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: value.mv_data, count: 16)) }
        return UUID(uuid: uuid)
    }

    /// Calls `body` with an MDB_val over the UTF-8 bytes of `text` (valid for the call only;
    /// LMDB only reads through it).
    private static func withValue<R>(_ text: String, _ body: (inout MDB_val) -> R) -> R {
        var text = text
        return text.withUTF8 { bytes in
            var value = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return body(&value)
        }
    }

    private static func withValue<R>(_ bytes: [UInt8], _ body: (inout MDB_val) -> R) -> R {
        var bytes = bytes
        return bytes.withUnsafeMutableBytes { raw in
            var value = MDB_val(mv_size: raw.count, mv_data: raw.baseAddress)
            return body(&value)
        }
    }

    /// The byte ranges of the title and the isbn in a row, bounds-checked.
    private static func titleAndISBN(in row: UnsafeRawBufferPointer) -> (title: Range<Int>, isbn: Range<Int>) {
        var offset = 0
        func next() -> Range<Int> {
            guard offset + 4 <= row.count else { BenchMain.fatal("lmdb: short row") }
            let count = Int(UInt32(littleEndian: row.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard offset + 4 + count <= row.count else { BenchMain.fatal("lmdb: short row") }
            defer { offset += 4 + count }
            return (offset + 4)..<(offset + 4 + count)
        }
        let title = next()
        _ = next()  // author
        return (title, next())
    }

    private static func withID<R>(_ id: UUID, _ body: (inout MDB_val) -> R) -> R {
        var uuid = id.uuid
        return withUnsafeMutableBytes(of: &uuid) { raw in
            var value = MDB_val(mv_size: 16, mv_data: raw.baseAddress)
            return body(&value)
        }
    }

    // MARK: Writes

    private func write(_ book: BenchBook, in txn: OpaquePointer?) {
        // The old row's title and isbn, copied only when they differ from the new ones (values
        // returned inside a write transaction are invalid after the next update).
        var existed = false
        var oldTitle: [UInt8]?
        var oldISBN: [UInt8]?
        LMDBBookStore.withID(book.id) { key in
            var value = MDB_val()
            let rc = mdb_get(txn, books, &key, &value)
            if rc == MDB_NOTFOUND { return }
            LMDB.check(rc, "mdb_get")
            existed = true
            let row = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
            let (title, isbn) = LMDBBookStore.titleAndISBN(in: row)
            if !row[title].elementsEqual(book.title.utf8) { oldTitle = Array(row[title]) }
            if !row[isbn].elementsEqual(book.isbn.utf8) { oldISBN = Array(row[isbn]) }
        }
        LMDBBookStore.withID(book.id) { key in
            LMDBBookStore.withValue(LMDBBookStore.encode(book)) { row in LMDB.check(mdb_put(txn, books, &key, &row, 0), "mdb_put books") }
            if !existed || oldTitle != nil {
                if let oldTitle {
                    LMDBBookStore.withValue(oldTitle) { title in LMDB.check(mdb_del(txn, titles, &title, &key), "mdb_del titles") }
                }
                LMDBBookStore.withValue(book.title) { title in LMDB.check(mdb_put(txn, titles, &title, &key, 0), "mdb_put titles") }
            }
            if !existed || oldISBN != nil {
                if let oldISBN {
                    LMDBBookStore.withValue(oldISBN) { isbn in LMDB.check(mdb_del(txn, isbns, &isbn, nil), "mdb_del isbns") }
                }
                LMDBBookStore.withValue(book.isbn) { isbn in
                    LMDB.check(mdb_put(txn, isbns, &isbn, &key, UInt32(MDB_NOOVERWRITE)), "mdb_put isbns (unique)")
                }
            }
        }
    }

    func persist(_ batch: ArraySlice<BenchBook>) {
        var txn: OpaquePointer?
        LMDB.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        for book in batch { write(book, in: txn) }
        LMDB.check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    func update(_ book: BenchBook) { persist([book][...]) }

    // MARK: Reads

    private func read<R>(_ body: (OpaquePointer?) -> R) -> R {
        if let reader {
            LMDB.check(mdb_txn_renew(reader), "mdb_txn_renew")
        } else {
            LMDB.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &reader), "mdb_txn_begin(read)")
        }
        defer { mdb_txn_reset(reader) }
        return body(reader)
    }

    private func book(_ id: UUID, in txn: OpaquePointer?) -> BenchBook? {
        LMDBBookStore.withID(id) { key in
            var value = MDB_val()
            let rc = mdb_get(txn, books, &key, &value)
            if rc == MDB_NOTFOUND { return nil }
            LMDB.check(rc, "mdb_get")
            return LMDBBookStore.decode(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size), id: id)
        }
    }

    func load(id: UUID) -> BenchBook? { read { book(id, in: $0) } }

    func contains(id: UUID) -> Bool {
        read { txn in
            LMDBBookStore.withID(id) { key in
                var value = MDB_val()
                return mdb_get(txn, books, &key, &value) == 0
            }
        }
    }

    func load(titlesFrom lower: String, below upper: String) -> [BenchBook] {
        read { txn in
            var cursor: OpaquePointer?
            LMDB.check(mdb_cursor_open(txn, titles, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var ids: [UUID] = []
            let upperBytes = Array(upper.utf8)
            LMDBBookStore.withValue(lower) { start in
                var key = start
                var value = MDB_val()
                var rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
                while rc == 0 {
                    let title = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
                    guard title.lexicographicallyPrecedes(upperBytes) else { break }
                    ids.append(LMDBBookStore.id(from: value))
                    rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
                }
                if rc != 0 && rc != MDB_NOTFOUND { LMDB.check(rc, "mdb_cursor_get") }
            }
            return ids.compactMap { book($0, in: txn) }
        }
    }

    func load(isbn: String) -> BenchBook? {
        read { txn in
            let id: UUID? = LMDBBookStore.withValue(isbn) { key in
                var value = MDB_val()
                let rc = mdb_get(txn, isbns, &key, &value)
                if rc == MDB_NOTFOUND { return nil }
                LMDB.check(rc, "mdb_get isbns")
                return LMDBBookStore.id(from: value)
            }
            return id.flatMap { book($0, in: txn) }
        }
    }

    func close() {
        if let reader { mdb_txn_abort(reader) }
        reader = nil
        if let env { mdb_env_close(env) }
        env = nil
    }
}
