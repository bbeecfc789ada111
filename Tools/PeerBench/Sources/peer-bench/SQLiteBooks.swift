// The typed workload on SQLite: one table with the book's columns (id as a 16-byte blob key,
// WITHOUT ROWID), an index on title and a UNIQUE constraint on isbn, WAL mode, prepared
// statements bound by hand and reused. Two configurations: `tuned` (the file memory-mapped, a
// 256 MiB page cache, no sync at all when unsynced) and `defaults` (what GRDB opens with: WAL,
// synchronous=NORMAL when unsynced, SQLite's 2 MB cache, no mmap). Either is the ceiling of what a
// wrapper such as GRDB reaches with the same settings (GRDB adds its record decoding and
// statement cache on top). Persisting is an upsert on the id (GRDB's
// `upsert`): a duplicate isbn fails, as in the other engines, instead of replacing another book.
// Reads run in autocommit: each statement is its own read transaction, like each Strata load.
import CSQLite
import Foundation
import Glibc
import StrataBenchKit

final class SQLiteBookStore: BookStore {
    private var db: OpaquePointer?
    private var upsert: OpaquePointer?
    private var byID: OpaquePointer?
    private var exists: OpaquePointer?
    private var byTitle: OpaquePointer?
    private var byISBN: OpaquePointer?
    private var begin: OpaquePointer?
    private var commit: OpaquePointer?

    enum Tuning { case tuned, defaults }

    init(path: String, durability: BookDurability, tuning: Tuning) {
        mkdir(path, 0o755)
        let file = path + "/books.db"
        db = SQLite.open(file, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
        SQLite.exec(db, "PRAGMA journal_mode=WAL")
        switch (tuning, durability) {
        case (_, .full): SQLite.exec(db, "PRAGMA synchronous=FULL")
        // OFF: no sync at all, like Strata's `.none` and LMDB's MDB_NOSYNC.
        case (.tuned, .unsynced): SQLite.exec(db, "PRAGMA synchronous=OFF")
        // GRDB's default: no sync per commit, but one at every WAL checkpoint.
        case (.defaults, .unsynced): SQLite.exec(db, "PRAGMA synchronous=NORMAL")
        }
        if tuning == .tuned {
            SQLite.exec(db, "PRAGMA mmap_size=1073741824")
            SQLite.exec(db, "PRAGMA cache_size=-262144")
        }
        SQLite.exec(db, """
            CREATE TABLE IF NOT EXISTS books(id BLOB PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL,
                isbn TEXT NOT NULL UNIQUE, pages INTEGER NOT NULL, published REAL NOT NULL) WITHOUT ROWID
            """)
        SQLite.exec(db, "CREATE INDEX IF NOT EXISTS books_title ON books(title)")
        upsert = SQLite.prepare(db, """
            INSERT INTO books(id, title, author, isbn, pages, published) VALUES(?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT(id) DO UPDATE SET title = excluded.title, author = excluded.author, isbn = excluded.isbn,
                pages = excluded.pages, published = excluded.published
            """)
        byID = SQLite.prepare(db, "SELECT id, title, author, isbn, pages, published FROM books WHERE id = ?1")
        exists = SQLite.prepare(db, "SELECT 1 FROM books WHERE id = ?1")
        byTitle = SQLite.prepare(db, "SELECT id, title, author, isbn, pages, published FROM books WHERE title >= ?1 AND title < ?2 ORDER BY title")
        byISBN = SQLite.prepare(db, "SELECT id, title, author, isbn, pages, published FROM books WHERE isbn = ?1")
        begin = SQLite.prepare(db, "BEGIN")
        commit = SQLite.prepare(db, "COMMIT")
    }

    /// SQLITE_TRANSIENT: SQLite copies the bound bytes (the Swift strings are temporaries).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ text: String, at index: Int32, in statement: OpaquePointer?) {
        var text = text
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self),
                                  Int32(bytes.count), SQLiteBookStore.transient)
        }
    }

    private func bind(_ id: UUID, at index: Int32, in statement: OpaquePointer?) {
        withUnsafeBytes(of: id.uuid) { _ = sqlite3_bind_blob(statement, index, $0.baseAddress, 16, SQLiteBookStore.transient) }
    }

    private func write(_ book: BenchBook) {
        bind(book.id, at: 1, in: upsert)
        bind(book.title, at: 2, in: upsert)
        bind(book.author, at: 3, in: upsert)
        bind(book.isbn, at: 4, in: upsert)
        sqlite3_bind_int64(upsert, 5, Int64(book.pages))
        sqlite3_bind_double(upsert, 6, book.published.timeIntervalSince1970)
        SQLite.stepDone(db, upsert, "INSERT")
    }

    private func text(_ statement: OpaquePointer?, _ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The book in the current row of `statement` (columns in the order of the SELECTs above).
    private func row(_ statement: OpaquePointer?) -> BenchBook {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if let blob = sqlite3_column_blob(statement, 0), sqlite3_column_bytes(statement, 0) == 16 {
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: blob, count: 16)) }
        }
        return BenchBook(id: UUID(uuid: uuid), title: text(statement, 1), author: text(statement, 2), isbn: text(statement, 3),
                         pages: Int(sqlite3_column_int64(statement, 4)),
                         published: Date(timeIntervalSince1970: sqlite3_column_double(statement, 5)))
    }

    /// Steps `statement` (already bound) for at most one row.
    private func single(_ statement: OpaquePointer?) -> BenchBook? {
        defer { sqlite3_reset(statement) }
        let rc = sqlite3_step(statement)
        if rc == SQLITE_ROW { return row(statement) }
        if rc != SQLITE_DONE { SQLite.failure(db, "SELECT") }
        return nil
    }

    func persist(_ books: ArraySlice<BenchBook>) {
        SQLite.stepDone(db, begin, "BEGIN")
        for book in books { write(book) }
        SQLite.stepDone(db, commit, "COMMIT")
    }

    func update(_ book: BenchBook) { write(book) }

    func load(id: UUID) -> BenchBook? {
        bind(id, at: 1, in: byID)
        return single(byID)
    }

    func contains(id: UUID) -> Bool {
        bind(id, at: 1, in: exists)
        defer { sqlite3_reset(exists) }
        return sqlite3_step(exists) == SQLITE_ROW
    }

    func load(titlesFrom lower: String, below upper: String) -> [BenchBook] {
        bind(lower, at: 1, in: byTitle)
        bind(upper, at: 2, in: byTitle)
        defer { sqlite3_reset(byTitle) }
        var books: [BenchBook] = []
        var rc = sqlite3_step(byTitle)
        while rc == SQLITE_ROW {
            books.append(row(byTitle))
            rc = sqlite3_step(byTitle)
        }
        if rc != SQLITE_DONE { SQLite.failure(db, "SELECT range") }
        return books
    }

    func load(isbn: String) -> BenchBook? {
        bind(isbn, at: 1, in: byISBN)
        return single(byISBN)
    }

    func close() {
        guard db != nil else { return }
        for statement in [upsert, byID, exists, byTitle, byISBN, begin, commit] { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
        db = nil
    }
}
