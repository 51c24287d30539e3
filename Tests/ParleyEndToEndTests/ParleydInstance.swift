import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `parleyd` for one test: its own free loopback port and temporary data
/// directory, one application made with `parleyd app create --json` on that directory,
/// and short timers when the test asks for them. Killed with SIGKILL at the end.
final class ParleydInstance: @unchecked Sendable {
    // Used from one test's thread; @unchecked because the child process is the only
    // shared state and ManagedProcess synchronises itself.
    let dataDirectory: URL
    let port: UInt16
    let applicationKey: String
    let secret: String
    let flags: [String]
    private(set) var process: ManagedProcess?
    private var generation = 0

    var serverURL: String { "http://127.0.0.1:\(port)" }

    /// Creates the data directory and the application, then starts the server.
    /// - Parameters:
    ///   - flags: extra `parleyd` flags, e.g. `["--ring-timeout", "3"]`.
    ///   - applicationFlags: more flags that name the application, made from its key
    ///     (`--sip-number NUMBER=KEY:user:ID`).
    init(flags: [String] = [], applicationFlags: (String) -> [String] = { _ in [] }) throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        port = try Self.freeLoopbackPort()
        let create = try ManagedProcess(
            name: "parleyd app create", executable: BuiltProducts.parleyd,
            arguments: ["app", "create", "--name", "e2e", "--json", "--data-dir", dataDirectory.path])
        let status = try create.waitForExit(timeout: 20)
        let json = create.lines.joined(separator: "\n")
        guard status == 0, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let key = object["key"] as? String, let secret = object["secret"] as? String else {
            throw ManagedProcess.Failure(description: "parleyd app create failed (status \(status))\n" + create.report)
        }
        applicationKey = key
        self.flags = flags + applicationFlags(key)
        self.secret = secret
        try start()
    }

    deinit {
        process?.killHard()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// Starts `parleyd` on the data directory and waits until it listens.
    func start() throws {
        generation += 1
        let process = try ManagedProcess(
            name: "parleyd#\(generation)", executable: BuiltProducts.parleyd,
            arguments: ["--data-dir", dataDirectory.path, "--listen", "127.0.0.1:\(port)", "--no-dev-app", "--log-level", "info"] + flags)
        self.process = process
        try process.waitForLine(timeout: 20, "'parleyd listening on'") { $0.hasPrefix("parleyd listening on") }
    }

    /// Runs `parleyd app ARGUMENTS --data-dir DIR` on this server's store (e.g. `set-dialling
    /// KEY --sip on`); a running server applies dialling changes at the next sign-in.
    func admin(_ arguments: [String]) throws {
        let run = try ManagedProcess(name: "parleyd app \(arguments.first ?? "")", executable: BuiltProducts.parleyd,
                                     arguments: ["app"] + arguments + ["--data-dir", dataDirectory.path])
        guard try run.waitForExit(timeout: 20) == 0 else {
            throw ManagedProcess.Failure(description: "parleyd app \(arguments.joined(separator: " ")) failed\n" + run.report)
        }
    }

    /// `kill -9`: no shutdown, no records closed.
    func killHard() { process?.killHard() }

    /// The `parley` flags that sign in as `user` to this server's application.
    func clientFlags(as user: String) -> [String] {
        ["--server", serverURL, "--app", applicationKey, "--secret", secret, "--as", user]
    }

    /// A user token for `user`, minted by `parley token`.
    func mintToken(as user: String) throws -> String {
        let token = try ManagedProcess(
            name: "parley token", executable: BuiltProducts.parley,
            arguments: ["token", "--app", applicationKey, "--secret", secret, "--as", user])
        guard try token.waitForExit(timeout: 10) == 0, let line = token.lines.first, !line.isEmpty else {
            throw ManagedProcess.Failure(description: "parley token failed\n" + token.report)
        }
        return line
    }

    /// `GET path` with the application's Basic credentials: status and JSON body.
    func get(_ path: String, timeout: Double = 10) throws -> (status: Int, body: [String: Any]?) {
        try request("GET", path, timeout: timeout)
    }

    /// `method path` with a JSON `body`, under the application's Basic credentials (or
    /// `credentials`, `KEY:SECRET`): status and JSON body.
    func request(_ method: String, _ path: String, body: [String: Any]? = nil, credentials: String? = nil,
                 timeout: Double = 10) throws -> (status: Int, body: [String: Any]?) {
        var request = URLRequest(url: URL(string: serverURL + path)!, timeoutInterval: timeout)
        request.httpMethod = method
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let basic = Data((credentials ?? "\(applicationKey):\(secret)").utf8).base64EncodedString()
        request.setValue("Basic \(basic)", forHTTPHeaderField: "Authorization")
        let result = ResponseBox()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            result.set(status: (response as? HTTPURLResponse)?.statusCode, data: data, error: error.map { String(describing: $0) })
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + timeout + 1) == .success else {
            throw ManagedProcess.Failure(description: "\(method) \(path): no answer within \(timeout) s")
        }
        let (status, data, error) = result.get()
        guard let status else { throw ManagedProcess.Failure(description: "\(method) \(path) failed: \(error ?? "no response")") }
        let body = data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        return (status, body)
    }

    /// A port on 127.0.0.1 nobody listens on now (the kernel's pick for port 0), low
    /// enough that the 2000 media ports parleyd takes after it by default exist.
    static func freeLoopbackPort() throws -> UInt16 {
        for _ in 0..<50 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw ManagedProcess.Failure(description: "socket() failed: errno \(errno)") }
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
                }
            }
            guard bound else { throw ManagedProcess.Failure(description: "bind to 127.0.0.1:0 failed: errno \(errno)") }
            let port = UInt16(bigEndian: address.sin_port)
            if port < 63_000 { return port }
        }
        throw ManagedProcess.Failure(description: "no free loopback port below 63000 in 50 tries")
    }

    /// Whether TCP and UDP sockets can bind 127.0.0.1:`port` now.
    static func isFreeLoopbackPort(_ port: UInt16) -> Bool {
        for type in [SOCK_STREAM, SOCK_DGRAM] {
            let descriptor = socket(AF_INET, Int32(type.rawValue), 0)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            if !bound { return false }
        }
        return true
    }
}

/// The answer of one URLSession task, handed from its callback thread to the test.
private final class ResponseBox: @unchecked Sendable {
    // Guarded by `lock`; @unchecked because NSLock is the synchronisation.
    private let lock = NSLock()
    private var status: Int?
    private var data: Data?
    private var error: String?

    func set(status: Int?, data: Data?, error: String?) {
        lock.withLock { self.status = status; self.data = data; self.error = error }
    }

    func get() -> (Int?, Data?, String?) { lock.withLock { (status, data, error) } }
}
