// The entity workloads (StrataBenchKit/EntityWorkload.swift) on SQLite, as a user writes them by
// hand: an `entities(id, type, created)` table and a `properties(entity, key, value, type,
// datestamp)` table (every entry a row, never updated) with indexes on (entity, key, datestamp)
// and (key, value); WAL, memory-mapped, a 256 MiB cache, prepared statements bound by hand and
// reused. The current value is the newest row of (entity, key) (an index seek with ORDER BY
// datestamp DESC LIMIT 1); get-or-create by name looks the name up through the (key, value)
// index joined with the entity's type, then inserts. (The lookup does not check that the name
// row is still the current one, which a careful user would add: it favours SQLite.)
import CSQLite
import Foundation
import Glibc
import StrataBenchKit

final class SQLiteEntityStore: EntityBenchStore {
    private var db: OpaquePointer?
    private var insertEntity: OpaquePointer?
    private var insertProperty: OpaquePointer?
    private var current: OpaquePointer?
    private var history: OpaquePointer?
    private var byName: OpaquePointer?
    private var begin: OpaquePointer?
    private var commit: OpaquePointer?
    private static let copied = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String, durability: BookDurability) {
        mkdir(path, 0o755)
        db = SQLite.open(path + "/entities.db", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
        SQLite.exec(db, "PRAGMA journal_mode=WAL")
        SQLite.exec(db, durability == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
        SQLite.exec(db, "PRAGMA mmap_size=1073741824")
        SQLite.exec(db, "PRAGMA cache_size=-262144")
        SQLite.exec(db, "CREATE TABLE IF NOT EXISTS entities(id BLOB PRIMARY KEY, type TEXT NOT NULL, created REAL NOT NULL) WITHOUT ROWID")
        SQLite.exec(db, "CREATE TABLE IF NOT EXISTS properties(entity BLOB NOT NULL, key TEXT NOT NULL, value ANY, type TEXT, datestamp REAL NOT NULL)")
        SQLite.exec(db, "CREATE INDEX IF NOT EXISTS properties_entity ON properties(entity, key, datestamp)")
        SQLite.exec(db, "CREATE INDEX IF NOT EXISTS properties_value ON properties(key, value)")
        insertEntity = SQLite.prepare(db, "INSERT INTO entities(id, type, created) VALUES(?1, ?2, ?3)")
        insertProperty = SQLite.prepare(db, "INSERT INTO properties(entity, key, value, type, datestamp) VALUES(?1, ?2, ?3, NULL, ?4)")
        current = SQLite.prepare(db, "SELECT value FROM properties WHERE entity = ?1 AND key = ?2 ORDER BY datestamp DESC, rowid DESC LIMIT 1")
        history = SQLite.prepare(db, "SELECT value, datestamp, type FROM properties WHERE entity = ?1 AND key = ?2 ORDER BY datestamp, rowid")
        byName = SQLite.prepare(db, """
            SELECT p.entity FROM properties p JOIN entities e ON e.id = p.entity
            WHERE p.key = 'name' AND p.value = ?1 AND e.type = ?2 LIMIT 2
            """)
        begin = SQLite.prepare(db, "BEGIN")
        commit = SQLite.prepare(db, "COMMIT")
    }

    private func bindText(_ text: String, _ index: Int32, _ statement: OpaquePointer?) {
        var text = text
        text.withUTF8 { _ = sqlite3_bind_text(statement, index, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32($0.count), Self.copied) }
    }

    private func bindID(_ id: UUID, _ index: Int32, _ statement: OpaquePointer?) {
        withUnsafeBytes(of: id.uuid) { _ = sqlite3_bind_blob(statement, index, $0.baseAddress, 16, Self.copied) }
    }

    private func bindValue(_ value: BenchValue, _ index: Int32, _ statement: OpaquePointer?) {
        switch value {
        case .int(let v): sqlite3_bind_int64(statement, index, Int64(v))
        case .double(let v): sqlite3_bind_double(statement, index, v)
        case .bool(let v): sqlite3_bind_int64(statement, index, v ? 1 : 0)
        case .string(let v): bindText(v, index, statement)
        }
    }

    /// The value in `column` of the current row, decoded as a user's code would.
    private func columnValue(_ statement: OpaquePointer?, _ column: Int32) -> BenchValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .int(Int(sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT: return .double(sqlite3_column_double(statement, column))
        default:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let pointer = sqlite3_column_text(statement, column) else { return .string("") }
            return .string(String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self))
        }
    }

    private func addProperty(_ id: UUID, _ key: String, _ value: BenchValue, _ datestamp: Double) {
        bindID(id, 1, insertProperty)
        bindText(key, 2, insertProperty)
        bindValue(value, 3, insertProperty)
        sqlite3_bind_double(insertProperty, 4, datestamp)
        SQLite.stepDone(db, insertProperty, "INSERT property")
    }

    private func addEntity(_ id: UUID, _ datestamp: Double) {
        bindID(id, 1, insertEntity)
        bindText("item", 2, insertEntity)
        sqlite3_bind_double(insertEntity, 3, datestamp)
        SQLite.stepDone(db, insertEntity, "INSERT entity")
    }

    func create(_ entities: ArraySlice<BenchEntity>, datestamp: Double) {
        SQLite.stepDone(db, begin, "BEGIN")
        for entity in entities {
            addEntity(entity.id, datestamp)
            for (key, value) in entity.properties { addProperty(entity.id, key, value, datestamp) }
        }
        SQLite.stepDone(db, commit, "COMMIT")
    }

    func set(_ changes: ArraySlice<BenchSet>) {
        SQLite.stepDone(db, begin, "BEGIN")
        for change in changes { addProperty(change.id, change.key, change.value, change.datestamp) }
        SQLite.stepDone(db, commit, "COMMIT")
    }

    func read(_ ids: ArraySlice<UUID>, keys: [String]) -> Int {
        SQLite.stepDone(db, begin, "BEGIN")
        var found = 0
        for id in ids {
            var values: [String: BenchValue] = [:]
            for key in keys {
                bindID(id, 1, current)
                bindText(key, 2, current)
                if sqlite3_step(current) == SQLITE_ROW { values[key] = columnValue(current, 0) }
                sqlite3_reset(current)
            }
            found += values.count
        }
        SQLite.stepDone(db, commit, "COMMIT")
        return found
    }

    func history(_ ids: ArraySlice<UUID>, key: String) -> Int {
        SQLite.stepDone(db, begin, "BEGIN")
        var entries = 0
        for id in ids {
            bindID(id, 1, history)
            bindText(key, 2, history)
            var list: [(BenchValue, Double)] = []
            while sqlite3_step(history) == SQLITE_ROW { list.append((columnValue(history, 0), sqlite3_column_double(history, 1))) }
            sqlite3_reset(history)
            entries += list.count
        }
        SQLite.stepDone(db, commit, "COMMIT")
        return entries
    }

    func resolve(names: ArraySlice<String>, datestamp: Double) -> Int {
        SQLite.stepDone(db, begin, "BEGIN")
        var created = 0
        for name in names {
            bindText(name, 1, byName)
            bindText("item", 2, byName)
            var matches = 0
            while sqlite3_step(byName) == SQLITE_ROW { matches += 1 }
            sqlite3_reset(byName)
            if matches > 1 { BenchMain.fatal("sqlite: name \(name) is ambiguous") }
            if matches == 0 {
                let id = UUID()
                addEntity(id, datestamp)
                addProperty(id, "name", .string(name), datestamp)
                created += 1
            }
        }
        SQLite.stepDone(db, commit, "COMMIT")
        return created
    }

    func close() {
        guard db != nil else { return }
        for statement in [insertEntity, insertProperty, current, history, byName, begin, commit] { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
        db = nil
    }
}
