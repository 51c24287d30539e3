import Glibc
import ParleyNet
import ParleyServer

// `ParleyBench server-serve`: a ParleyServer in a process of its own, so the `server` rows
// measure its CPU and memory apart from the load generator's. It takes the flags of
// `parleyd` that the bench uses (--data-dir, --listen, --media-ports LO-HI, --no-dev-app)
// and prints parleyd's banner line, so the bench can drive either the same way. It runs
// with parleyd's defaults (log level info to stderr, one edge loop per core) until its
// stdin ends.

/// Runs the server; returns the process exit status.
func serverServeMain(_ arguments: [String]) -> Int32 {
    var dataDirectory: String?
    var listen = SocketAddress.ipv4Loopback(port: 0)
    var mediaPorts: ClosedRange<UInt16>?
    var developmentApplication = true
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        switch flag {
        case "--data-dir": dataDirectory = rest.popFirst()
        case "--listen":
            guard let text = rest.popFirst(), let address = try? SocketAddress(parsing: text) else { return usage("bad --listen") }
            listen = address
        case "--media-ports":
            let bounds = rest.popFirst()?.split(separator: "-").compactMap { UInt16($0) } ?? []
            guard bounds.count == 2, bounds[0] <= bounds[1] else { return usage("bad --media-ports (LO-HI)") }
            mediaPorts = bounds[0]...bounds[1]
        case "--no-dev-app": developmentApplication = false
        default: return usage("unknown flag \(flag)")
        }
    }
    guard let dataDirectory else { return usage("--data-dir is required") }
    var configuration = ServerConfiguration(dataDirectory: dataDirectory, listenAddresses: [listen])
    configuration.mediaBindAddress = listen.withPort(0)
    if let mediaPorts { configuration.mediaPorts = mediaPorts }
    configuration.createDevelopmentApplication = developmentApplication
    let server: ParleyServer
    do {
        server = try ParleyServer(configuration: configuration, log: ServerLog(level: configuration.logLevel))
        try server.start()
    } catch {
        return usage("cannot start: \(error)")
    }
    for address in server.localAddresses {
        emitServeLine("parleyd listening on http://\(address) (signaling ws://\(address)/v1/ws)")
    }
    // Until the bench closes our stdin (or dies, which closes it too).
    var byte: UInt8 = 0
    while true {
        let n = read(0, &byte, 1)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
    }
    server.shutdown()
    return 0
}

private func usage(_ problem: String) -> Int32 {
    let text = "server-serve: \(problem)\nusage: ParleyBench server-serve --data-dir DIR [--listen ADDR:PORT] [--media-ports LO-HI] [--no-dev-app]\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    return 2
}

/// One line to stdout without stdio buffering (the parent reads it from a pipe).
private func emitServeLine(_ text: String) {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return }
        bytes = bytes.dropFirst(n)
    }
}

/// `ParleyBench server-serve ...`: runs the server, then exits the process with its status.
func runServerServeAndExit(_ arguments: [String]) -> Never { exit(serverServeMain(arguments)) }
