import Glibc

enum StoreFiles {
    /// Whether anything exists at `path` (a file, directory or dangling link).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
