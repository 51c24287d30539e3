import Glibc
import ParleyCrypto
import ParleyStore
import ParleyWireCore

/// The key that authenticates `GET /v1/calls` cursors (docs/rest.md, "Cursors"): the REST
/// API hands out the store's cursor followed by an HMAC-SHA256 over it and the query it
/// belongs to (application, `user`, `since`), and takes back only cursors whose tag
/// matches. A cursor this server did not write, or one written for another query, is a 400.
///
/// parleyd keeps the key in its data directory (`rest-cursor.key`, made at the first
/// start), so cursors stay valid across restarts.
public struct RESTCursorKey: Sendable, Hashable {
    /// The file name in the data directory.
    public static let fileName = "rest-cursor.key"
    /// Key length in bytes.
    public static let length = 32
    /// Bytes of the HMAC kept in a cursor (128 bits).
    static let tagLength = 16

    let bytes: [UInt8]

    /// A fresh random key (cursors die with it).
    public init() {
        var generator = SystemRandomNumberGenerator()
        bytes = (0..<Self.length).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A key of exactly `length` bytes.
    public init(bytes: [UInt8]) throws(RESTCursorKeyError) {
        guard bytes.count == Self.length else {
            throw RESTCursorKeyError(message: "a cursor key has \(Self.length) bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// The key in `directory/rest-cursor.key`, made (base64 of fresh random bytes, mode
    /// 0600) if the file does not exist. A file that is not such a key is an error naming
    /// it, not silently replaced: deleting it invalidates every cursor handed out.
    public static func loadOrCreate(inDirectory directory: String) throws(RESTCursorKeyError) -> RESTCursorKey {
        let path = directory.hasSuffix("/") ? directory + fileName : directory + "/" + fileName
        // The data directory exists when the store is SQLite; made here (private) for any other.
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw RESTCursorKeyError(message: "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        for _ in 0..<2 {
            if let text = try read(path) {
                let trimmed = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == " " }).first.map(String.init) ?? ""
                guard let bytes = try? Base64.decode(trimmed), bytes.count == length else {
                    throw RESTCursorKeyError(message: "\(path) is not a cursor key (\(length) bytes in base64); remove it to make a new one")
                }
                return try RESTCursorKey(bytes: bytes)
            }
            let key = RESTCursorKey()
            // O_EXCL: if another process made the file meanwhile, read its key instead.
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd < 0 {
                guard errno == EEXIST else { throw RESTCursorKeyError(message: "cannot create \(path): \(String(cString: strerror(errno)))") }
                continue
            }
            let contents = Array((Base64.encode(key.bytes) + "\n").utf8)
            let written = contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd) == 0
            close(fd)
            guard written == contents.count, synced else {
                unlink(path)
                throw RESTCursorKeyError(message: "cannot write \(path)")
            }
            return key
        }
        throw RESTCursorKeyError(message: "cannot read or create \(path)")
    }

    /// The file's text, nil when it does not exist.
    private static func read(_ path: String) throws(RESTCursorKeyError) -> String? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw RESTCursorKeyError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw RESTCursorKeyError(message: "cannot read \(path)") }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    // MARK: Cursors

    /// The cursor to hand out for the store's `storeCursor` of `query`:
    /// `<storeCursor>.<tag>`, the tag base64url without padding.
    func seal(_ storeCursor: String, for query: CallQuery) -> String {
        storeCursor + "." + Base64.encodeURL(tag(storeCursor, query))
    }

    /// The store's cursor inside `cursor` if this key sealed it for the same application,
    /// `user` and `since` as `query`; nil otherwise.
    func open(_ cursor: String, for query: CallQuery) -> String? {
        guard let dot = cursor.lastIndex(of: "."), let given = try? Base64.decodeURL(cursor[cursor.index(after: dot)...]),
              given.count == Self.tagLength else { return nil }
        let storeCursor = String(cursor[..<dot])
        guard Digest.constantTimeEqual(given, tag(storeCursor, query)) else { return nil }
        return storeCursor
    }

    /// HMAC-SHA256 over a versioned label and each field with its length in front, so no
    /// two different queries share an input.
    private func tag(_ storeCursor: String, _ query: CallQuery) -> [UInt8] {
        var input: [UInt8] = Array("parley-rest-cursor-v1".utf8)
        for field in [query.applicationKey, query.user ?? "", String(query.since), storeCursor] {
            input += Array("\n\(field.utf8.count):".utf8) + Array(field.utf8)
        }
        // HMAC-SHA256 fails only if OpenSSL cannot allocate; an empty tag then matches nothing.
        let mac = (try? Digest.hmac(.sha256, key: bytes, input)) ?? []
        return Array(mac.prefix(Self.tagLength))
    }
}

/// The cursor key file could not be read, made or understood.
public struct RESTCursorKeyError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, naming the file.
    public let message: String
    public var description: String { message }
}
