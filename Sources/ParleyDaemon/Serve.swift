import Dispatch
import Foundation
import ParleyNetCore
import ParleyServer
import ParleyStore

/// `parleyd serve`: written only against the ParleyServer seam (init, installHTTPHandler,
/// start, localAddresses, store, metrics, callControl, developmentApplication, shutdown).
enum Serve {
    /// Runs until SIGINT or SIGTERM; returns the exit status (0 after a clean shutdown).
    static func run(_ configuration: ServerConfiguration) -> Int32 {
        let log = ServerLog(level: configuration.logLevel)
        let server: ParleyServer
        do {
            // Private from the start: the store holds application secrets.
            try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            standardError("parleyd: cannot create data directory \(configuration.dataDirectory): \(error.localizedDescription)")
            return 1
        }
        do {
            server = try ParleyServer(configuration: configuration, components: DaemonComposition.components(for: configuration, log: log), log: log)
        } catch {
            if error is ConferenceConfigurationError || error is NumberRouteApplicationError || error is RecordingDirectoryError {
                standardError("parleyd: \(error)")
            } else {
                standardError("parleyd: cannot open the store in \(configuration.dataDirectory): \(error)")
            }
            return 1
        }
        let api = RESTAPI(store: server.store, callControl: server.callControl, metrics: server.metrics, log: log,
                          cursorKey: server.restCursorKey)
        server.installHTTPHandler(api.handler)

        // Signals are taken over before start, so one arriving during start-up still
        // shuts down cleanly instead of killing the process.
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }

        do {
            try server.start()
        } catch {
            standardError("parleyd: cannot start: \(error)")
            server.shutdown()
            return 1
        }
        // Written straight to the file descriptor (no stdio buffer), so a supervisor or a
        // test reading a pipe sees the addresses at once.
        let text = banner(addresses: server.localAddresses, developmentApplication: server.developmentApplication,
                          dataDirectory: configuration.dataDirectory, tlsAddresses: server.tlsLocalAddresses,
                          sipAddress: server.sipLocalAddress, sipTLSAddress: server.sipTLSLocalAddress, softphone: softphoneCommand())
        FileHandle.standardOutput.write(Data(text.utf8))

        stop.wait()
        log.info("server.signal", ["action": "shutdown"])
        server.shutdown()
        return 0
    }

    /// What `serve` prints on standard output once listening.
    static func banner(addresses: [SocketAddress], developmentApplication: Application?, dataDirectory: String,
                       tlsAddresses: [SocketAddress] = [], sipAddress: SocketAddress? = nil, sipTLSAddress: SocketAddress? = nil,
                       softphone: String = "parley") -> String {
        var out = ""
        for address in addresses {
            out += "parleyd listening on http://\(address) (signaling ws://\(address)/v1/ws)\n"
        }
        for address in tlsAddresses {
            out += "parleyd listening on https://\(address) (signaling wss://\(address)/v1/ws)\n"
        }
        if let sipAddress {
            out += "parleyd listening for SIP on udp and tcp \(sipAddress)\n"
        }
        if let sipTLSAddress {
            out += "parleyd listening for SIP on tls \(sipTLSAddress)\n"
        }
        let server = "http://" + (addresses.first.map(reachable) ?? SocketAddress.ipv4Loopback(port: 8080)).description
        if let app = developmentApplication {
            out += """
                development application created (key and secret stored in \(dataDirectory)):
                  key:    \(app.key)
                  secret: \(app.secret)
                place a call between two users, in two terminals:
                  \(softphone) listen --server \(server) --app \(app.key) --secret \(app.secret) --as bob --answer
                  \(softphone) call bob --server \(server) --app \(app.key) --secret \(app.secret) --as alice

                """
        } else {
            out += "applications: parleyd app list --data-dir \(dataDirectory) (--show-secrets for the secrets)\n"
        }
        return out
    }

    /// How to run the softphone: the `parley` built next to this `parleyd` (as `make run`
    /// leaves it in `.build/release/`), by a path relative to the working directory when it
    /// is below it; plain `parley` (from PATH) otherwise.
    static func softphoneCommand() -> String {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        let sibling = executable.deletingLastPathComponent().appendingPathComponent("parley").path
        guard FileManager.default.isExecutableFile(atPath: sibling) else { return "parley" }
        let cwd = FileManager.default.currentDirectoryPath + "/"
        return sibling.hasPrefix(cwd) ? String(sibling.dropFirst(cwd.count)) : sibling
    }

    /// The address a local client should use: loopback in place of the any-address.
    private static func reachable(_ address: SocketAddress) -> SocketAddress {
        if address.hostBytes.allSatisfy({ $0 == 0 }) {
            return address.family == .ipv4 ? .ipv4Loopback(port: address.port) : .ipv6Loopback(port: address.port)
        }
        return address
    }
}

func standardError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
