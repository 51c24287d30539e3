import Foundation
import ParleyAuth
import ParleyCallModel
import ParleyCallCore
import ParleyEdgeIO
import ParleyHTTP
import ParleyNetLinux
import ParleySQLite
import ParleyStore
import Synchronization
import Testing

@testable import ParleyServer

/// The REST API through a real EdgeServer on loopback, over a real store in a temporary
/// directory. Hang-ups go through `StoreHangUpControl`, a small CallControl that ends the
/// call in the store (the engine's own is tested with the engine).
@Suite struct RESTAPITests {
    @Test func healthAndAuthentication() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        let health = try await fixture.request("GET /healthz")
        #expect(health.status == 200)
        #expect(health.body == #"{"status":"ok"}"#)

        let missing = try await fixture.request("GET /v1/calls")
        #expect(missing.status == 401)
        #expect(missing.header("WWW-Authenticate") == #"Basic realm="parley""#)
        #expect(missing.header("Content-Type") == "application/json")
        #expect(try missing.json()["code"] as? String == "missing_credentials")

        let malformed = try await fixture.request("GET /v1/calls", authorization: "Bearer abc")
        #expect(malformed.status == 401)
        #expect(try malformed.json()["code"] as? String == "malformed_credentials")

        let wrongSecret = try await fixture.request(
            "GET /v1/calls", authorization: BasicCredentials(applicationKey: fixture.appA.key, secret: fixture.appB.secret).authorizationValue)
        let unknownKey = try await fixture.request(
            "GET /v1/calls", authorization: BasicCredentials(applicationKey: "no-such-app", secret: fixture.appA.secret).authorizationValue)
        for refused in [wrongSecret, unknownKey] {
            #expect(refused.status == 401)
            #expect(refused.header("WWW-Authenticate") == #"Basic realm="parley""#)
            #expect(try refused.json()["code"] as? String == "bad_credentials")
        }
        // An unknown key and a wrong secret read the same.
        #expect(wrongSecret.body == unknownKey.body)

        let metrics = try await fixture.request("GET /metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(metrics.body.contains("parley_rest_auth_failures_total{code=\"bad_credentials\"} 2\n"))
        #expect(metrics.body.contains("parley_rest_auth_failures_total{code=\"malformed_credentials\"} 1\n"))
        #expect(metrics.body.contains("parley_rest_auth_failures_total{code=\"missing_credentials\"} 1\n"))
    }

    /// Every thread of Swift's shared pool is blocked (as a test harness or an embedding app
    /// may do) until the REST answer is in; the REST API still answers, because its tasks
    /// prefer their own executor. Were they on the pool, the request would time out (10 s)
    /// before the blockers let go (30 s).
    @Test func answersWhileTheSharedPoolIsBlocked() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        let blockers = PoolBlockers()
        let width = ProcessInfo.processInfo.activeProcessorCount + 2
        for _ in 0..<width {
            Task.detached { blockPoolThread(until: blockers) }
        }
        let status = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            Thread.sleep(forTimeInterval: 0.3)  // let the blockers take the pool
            let response = try? fixture.blockingRequest("GET /healthz", authorization: nil, body: "")
            status.withLock { $0 = response?.status ?? 0 }
            for _ in 0..<width { blockers.release.signal() }
            done.signal()
        }.start()
        await withCheckedContinuation { continuation in
            Thread {
                done.wait()
                continuation.resume()
            }.start()
        }
        #expect(status.withLock { $0 } == 200)
        #expect(blockers.timedOut.withLock { $0 } == 0)
    }

    @Test func getCallAndNoLeakAcrossApplications() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        let id = "6f1c2a9e-3b7d-4c55-9a41-0e8f5d2b7c13"
        try fixture.store.performAndWait { store throws(StoreError) in
            try store.createCall(id: id, applicationKey: fixture.appA.key, caller: "alice", callee: "bob", startedTime: 1_000)
            try store.updateCallState(id: id, to: .ringing, at: 1_100)
            try store.updateCallState(id: id, to: .answered, at: 2_000)
            let stats = CallLegStatistics(packetsSent: 500, octetsSent: 40_000, packetsReceived: 490, octetsReceived: 39_200,
                                          inboundFractionLost: 0.0078125, inboundCumulativeLost: 10, inboundJitterMilliseconds: 2.5,
                                          roundTripTimeMilliseconds: 12.5)
            _ = try store.finishCall(id: id, cause: .hungUp, at: 12_000,
                                     legs: [CallLeg(role: .caller, userId: "alice", deviceId: "dev-1", updatedTime: 12_000, statistics: stats)])
            try store.recordCallEvent(callId: id, applicationKey: fixture.appA.key,
                                      CallEvent(time: 1_050, kind: "push.sent", detail: ["device": "bob-phone", "attempt": "1"]))
            try store.recordCallEvent(callId: id, applicationKey: fixture.appA.key,
                                      CallEvent(time: 1_060, kind: "push.answer", detail: ["status": "200", "outcome": "delivered"]))
        }
        let response = try await fixture.request("GET /v1/calls/\(id)", as: fixture.appA)
        #expect(response.status == 200)
        let call = try response.json()
        #expect(call["callId"] as? String == id)
        #expect(call["applicationKey"] as? String == fixture.appA.key)
        #expect(call["caller"] as? String == "alice")
        #expect(call["callee"] as? String == "bob")
        #expect(call["direction"] as? String == "appToApp")
        #expect(call["state"] as? String == "ended")
        #expect(call["endCause"] as? String == "hungUp")
        #expect((call["durationMs"] as? NSNumber)?.int64Value == 10_000)
        let details = try #require(call["details"] as? [String: Any])
        #expect((details["startedTime"] as? NSNumber)?.int64Value == 1_000)
        #expect((details["rungTime"] as? NSNumber)?.int64Value == 1_100)
        #expect((details["answeredTime"] as? NSNumber)?.int64Value == 2_000)
        #expect((details["endedTime"] as? NSNumber)?.int64Value == 12_000)
        let legs = try #require(call["legs"] as? [[String: Any]])
        #expect(legs.count == 1)
        let statistics = try #require(legs.first?["statistics"] as? [String: Any])
        #expect((statistics["packetsReceived"] as? NSNumber)?.int64Value == 490)
        #expect((statistics["inboundCumulativeLost"] as? NSNumber)?.int64Value == 10)
        #expect((statistics["inboundJitterMilliseconds"] as? NSNumber)?.doubleValue == 2.5)
        #expect((statistics["roundTripTimeMilliseconds"] as? NSNumber)?.doubleValue == 12.5)
        let timeline = try #require(call["timeline"] as? [[String: Any]])
        #expect(timeline.map { $0["kind"] as? String } == ["push.sent", "push.answer"])
        #expect((timeline.first?["time"] as? NSNumber)?.int64Value == 1_050)
        #expect(timeline.first?["detail"] as? [String: String] == ["device": "bob-phone", "attempt": "1"])
        #expect((timeline.last?["detail"] as? [String: String])?["outcome"] == "delivered")

        // Another application's call answers exactly like a call that does not exist.
        let foreign = try await fixture.request("GET /v1/calls/\(id)", as: fixture.appB)
        let absent = try await fixture.request("GET /v1/calls/00000000-0000-4000-8000-000000000000", as: fixture.appB)
        #expect(foreign.status == 404)
        #expect(absent.status == 404)
        #expect(try foreign.json()["code"] as? String == "call_not_found")
        #expect(try absent.json()["code"] as? String == "call_not_found")
        #expect(foreign.body.replacingOccurrences(of: id, with: "X")
                == absent.body.replacingOccurrences(of: "00000000-0000-4000-8000-000000000000", with: "X"))
    }

    @Test func listCallsFiltersAndPages() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        try fixture.store.performAndWait { store throws(StoreError) in
            for index in 0..<5 {
                try store.createCall(id: "call-\(index)", applicationKey: fixture.appA.key,
                                     caller: index.isMultiple(of: 2) ? "alice" : "carol", callee: index == 3 ? "alice" : "bob",
                                     startedTime: Int64(1_000 + index * 100))
            }
            try store.createCall(id: "other-app", applicationKey: fixture.appB.key, caller: "alice", callee: "bob", startedTime: 1_050)
        }
        // alice: call-0 (caller), call-2 (caller), call-3 (callee), call-4 (caller).
        var seen: [String] = []
        var cursor: String?
        for _ in 0..<10 {
            var target = "/v1/calls?user=alice&limit=2"
            if let cursor { target += "&cursor=" + cursor }
            let page = try await fixture.request("GET " + target, as: fixture.appA)
            #expect(page.status == 200)
            let body = try page.json()
            let calls = try #require(body["calls"] as? [[String: Any]])
            seen += calls.compactMap { $0["callId"] as? String }
            cursor = body["nextCursor"] as? String
            if cursor == nil { break }
        }
        #expect(seen == ["call-0", "call-2", "call-3", "call-4"])

        let since = try await fixture.request("GET /v1/calls?since=1250", as: fixture.appA)
        let sinceIDs = try #require(try since.json()["calls"] as? [[String: Any]]).compactMap { $0["callId"] as? String }
        #expect(sinceIDs == ["call-3", "call-4"])

        // Percent-encoding and '+' decode as in forms; this user does not exist.
        let encoded = try await fixture.request("GET /v1/calls?user=al%69ce+x", as: fixture.appA)
        #expect(encoded.status == 200)
        #expect(encoded.body == #"{"calls":[]}"#)
        let decodedUser = try await fixture.request("GET /v1/calls?user=%61lice&limit=1000", as: fixture.appA)
        #expect(try #require(try decodedUser.json()["calls"] as? [Any]).count == 4)
    }

    /// docs/rest.md: a cursor this server did not write is a 400, however well formed, and
    /// so is one written for another query or application.
    @Test func cursorsAreAuthenticated() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        try fixture.store.performAndWait { store throws(StoreError) in
            for index in 0..<5 {
                try store.createCall(id: "call-\(index)", applicationKey: fixture.appA.key, caller: "alice", callee: "bob",
                                     startedTime: Int64(1_000 + index * 100))
                try store.createCall(id: "b-\(index)", applicationKey: fixture.appB.key, caller: "alice", callee: "bob",
                                     startedTime: Int64(1_000 + index * 100))
            }
        }
        let first = try await fixture.request("GET /v1/calls?user=alice&since=500&limit=2", as: fixture.appA)
        let cursor = try #require(try first.json()["nextCursor"] as? String)
        // The server's own cursor pages on, also with another limit.
        let next = try await fixture.request("GET /v1/calls?user=alice&since=500&limit=3&cursor=\(cursor)", as: fixture.appA)
        #expect(next.status == 200)
        #expect(try #require(try next.json()["calls"] as? [[String: Any]]).compactMap { $0["callId"] as? String }
                == ["call-2", "call-3", "call-4"])

        let storePart = String(cursor[..<cursor.lastIndex(of: ".")!])
        var tampered = Array(cursor)
        tampered[tampered.count - 1] = tampered.last == "A" ? "B" : "A"
        let forged = [
            "1100.2",                                  // the store's own form, unsigned: positions a search if taken
            "1100.2.AAAAAAAAAAAAAAAAAAAAAA",           // well formed, tag not ours
            "1200.3" + cursor[cursor.lastIndex(of: ".")!...],   // our tag on another position
            String(tampered),
            storePart,
            cursor + "A",
        ]
        for bad in forged {
            let response = try await fixture.request("GET /v1/calls?user=alice&since=500&limit=2&cursor=\(bad)", as: fixture.appA)
            #expect(response.status == 400, "cursor \(bad) got \(response.status)")
            #expect(try response.json()["code"] as? String == "invalid_parameter")
        }
        // A real cursor, but for another query or application.
        for (target, application) in [("user=bob&since=500", fixture.appA), ("user=alice&since=600", fixture.appA),
                                      ("since=500", fixture.appA), ("user=alice&since=500", fixture.appB)] {
            let response = try await fixture.request("GET /v1/calls?\(target)&limit=2&cursor=\(cursor)", as: application)
            #expect(response.status == 400, "\(target) for \(application.name) got \(response.status)")
        }
    }

    /// The key lives in the data directory: the same cursors at the next start; a file that
    /// is not a key is an error naming it.
    @Test func theCursorKeyIsKeptInTheDataDirectory() throws {
        let directory = NSTemporaryDirectory() + "parley-cursor-key-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try RESTCursorKey.loadOrCreate(inDirectory: directory)
        let path = directory + "/" + RESTCursorKey.fileName
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let again = try RESTCursorKey.loadOrCreate(inDirectory: directory)
        #expect(again == made)
        let query = CallQuery(applicationKey: "app", user: "alice", since: 5)
        let sealed = made.seal("1000.7", for: query)
        #expect(again.open(sealed, for: query) == "1000.7")
        #expect(RESTCursorKey().open(sealed, for: query) == nil)

        // A server restarted on the directory keeps its key.
        let first = try ServerHarness(directory: directory, startsServer: false)
        let key = first.server.restCursorKey
        #expect(key == made)
        first.server.shutdown()
        let second = try ServerHarness(directory: directory, startsServer: false)
        #expect(second.server.restCursorKey == key)
        second.server.shutdown()

        try "not a key\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: RESTCursorKeyError.self) { try RESTCursorKey.loadOrCreate(inDirectory: directory) }
        #expect(error?.message.contains(path) == true)
    }

    @Test(arguments: [
        "limit=0", "limit=1001", "limit=abc", "limit=-1", "limit=+5", "since=-1", "since=1.5", "since=99999999999999999999",
        "user=", "unknown=1", "user=a&user=b", "user=%zz", "user=%ff", "cursor=bogus", "cursor=",
    ])
    func badQueryParameters(query: String) async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        let response = try await fixture.request("GET /v1/calls?" + query, as: fixture.appA)
        #expect(response.status == 400)
        #expect(try response.json()["code"] as? String == "invalid_parameter")
        #expect((try response.json()["message"] as? String)?.isEmpty == false)
    }

    @Test func hangUp() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        try fixture.store.performAndWait { store throws(StoreError) in
            try store.createCall(id: "ringing", applicationKey: fixture.appA.key, caller: "alice", callee: "bob", startedTime: 1_000)
            try store.updateCallState(id: "ringing", to: .ringing, at: 1_100)
            try store.createCall(id: "talking", applicationKey: fixture.appA.key, caller: "alice", callee: "bob", startedTime: 1_000)
            try store.updateCallState(id: "talking", to: .answered, at: 1_500)
        }
        let canceled = try await fixture.request("DELETE /v1/calls/ringing", as: fixture.appA)
        #expect(canceled.status == 204)
        #expect(canceled.body.isEmpty)
        #expect(try await fixture.request("GET /v1/calls/ringing", as: fixture.appA).json()["endCause"] as? String == "canceled")

        // Another application cannot hang up (nor learn that the call exists).
        let foreign = try await fixture.request("DELETE /v1/calls/talking", as: fixture.appB)
        #expect(foreign.status == 404)
        #expect(try foreign.json()["code"] as? String == "call_not_found")

        #expect(try await fixture.request("DELETE /v1/calls/talking", as: fixture.appA).status == 204)
        #expect(try await fixture.request("GET /v1/calls/talking", as: fixture.appA).json()["endCause"] as? String == "hungUp")

        let again = try await fixture.request("DELETE /v1/calls/talking", as: fixture.appA)
        #expect(again.status == 409)
        #expect(try again.json()["code"] as? String == "call_ended")
        #expect(try await fixture.request("DELETE /v1/calls/nothing", as: fixture.appA).status == 404)
    }

    @Test func routingErrorsAreJSON() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        let cases: [(String, Int, String?)] = [
            ("POST /v1/calls/x", 405, "GET, HEAD, DELETE"),
            ("PUT /v1/calls", 405, "GET, HEAD"),
            ("DELETE /metrics", 405, "GET, HEAD"),
            ("POST /healthz", 405, "GET, HEAD"),
            ("GET /v1/nothing", 404, nil),
            ("GET /v1/calls/a/b", 404, nil),
            ("GET /v1/calls/", 404, nil),
            ("GET /v1", 404, nil),
            ("GET /nothing", 404, nil),
        ]
        for (line, status, allow) in cases {
            let response = try await fixture.request(line, as: fixture.appA)
            #expect(response.status == status, "\(line)")
            #expect(response.header("Allow") == allow, "\(line)")
            let body = try response.json()
            #expect(body["code"] is String, "\(line)")
            #expect(body["message"] is String, "\(line)")
        }
        // The WebSocket path without an upgrade.
        let plain = try await fixture.request("GET /v1/ws")
        #expect(plain.status == 426)
        #expect(plain.header("Upgrade") == "websocket")
        #expect(try plain.json()["code"] as? String == "upgrade_required")
        // Unauthenticated, an unknown /v1 route is a 401: nothing about routes leaks.
        #expect(try await fixture.request("GET /v1/nothing").status == 401)
        // HEAD answers like GET, without a body.
        let head = try await fixture.request("HEAD /healthz")
        #expect(head.status == 200)
    }

    @Test func bodyOverTheEdgeLimitIs413() async throws {
        let fixture = try RESTFixture(maxBodySize: 1024)
        defer { fixture.close() }
        let response = try await fixture.request("DELETE /v1/calls/x", as: fixture.appA, body: String(repeating: "a", count: 4096))
        #expect(response.status == 413)
    }

    @Test func storeFailureIs500() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        try fixture.store.performAndWait { store throws(StoreError) in
            _ = try store.createCall(id: "c", applicationKey: fixture.appA.key, caller: "alice", callee: "bob", startedTime: 1_000)
        }
        // Break the schema behind the store's back, as a damaged file would.
        let db = try SQLiteDatabase(path: fixture.directory + "/" + SQLiteStore.defaultFileName)
        try db.execute("PRAGMA foreign_keys = OFF; DROP TABLE call_legs")
        let response = try await fixture.request("GET /v1/calls/c", as: fixture.appA)
        #expect(response.status == 500)
        #expect(try response.json()["code"] as? String == "internal_error")
        #expect(fixture.logLines().contains { $0.contains("rest.store_failed") })
    }

    @Test func previousSecretWorksOnlyDuringItsGracePeriod() async throws {
        let clock = Atomic<Int64>(10_000)
        let fixture = try RESTFixture(clock: { clock.load(ordering: .relaxed) })
        defer { fixture.close() }
        let old = fixture.appA
        let rotated = try fixture.store.performAndWait { store throws(StoreError) in
            try store.rotateSecret(key: old.key, newSecret: "AAECAwQFBgcICQoLDA0ODw==", at: 10_000, gracePeriodMilliseconds: 5_000)
        }
        #expect(try await fixture.request("GET /v1/calls", as: rotated).status == 200)
        #expect(try await fixture.request("GET /v1/calls", as: old).status == 200)
        clock.store(15_000, ordering: .relaxed)
        #expect(try await fixture.request("GET /v1/calls", as: old).status == 401)
        #expect(try await fixture.request("GET /v1/calls", as: rotated).status == 200)
    }

    @Test func metricsCombineCountersAndLiveCalls() async throws {
        let fixture = try RESTFixture()
        defer { fixture.close() }
        fixture.metrics.update { counters in
            counters.connectionsOpen = 2
            counters.callsEstablished = 7
            counters.callsEnded["hungUp"] = 6
        }
        try fixture.store.performAndWait { store throws(StoreError) in
            try store.createCall(id: "r", applicationKey: fixture.appA.key, caller: "alice", callee: "bob", startedTime: 1_000)
            try store.updateCallState(id: "r", to: .ringing, at: 1_100)
        }
        let body = try await fixture.request("GET /metrics").body
        #expect(body.contains("parley_connections_open 2\n"))
        #expect(body.contains("parley_calls_established_total 7\n"))
        #expect(body.contains("parley_calls_ended_total{cause=\"hungUp\"} 6\n"))
        #expect(body.contains("parley_calls_active{state=\"ringing\"} 1\n"))
        // The first scrape has no earlier sample to measure a rate from.
        #expect(body.contains("parley_call_setups_per_second 0\n"))
    }
}

// MARK: Test support

/// A store with two applications, a REST API over it and an EdgeServer on 127.0.0.1:0.
final class RESTFixture: Sendable {
    let directory: String
    let store: StoreQueue
    let metrics = ServerMetrics()
    let appA: Application
    let appB: Application
    let edge: EdgeServer
    private let lines = RESTLogLines()

    init(maxBodySize: Int = 1 << 20, clock: @escaping @Sendable () -> Int64 = RESTAPI.wallClockMilliseconds,
         callControl: (@Sendable (StoreQueue) -> any CallControl)? = nil) throws {
        directory = NSTemporaryDirectory() + "parley-rest-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try StoreQueue(path: directory + "/" + SQLiteStore.defaultFileName)
        let a = try ApplicationCredentials.generate(), b = try ApplicationCredentials.generate()
        (appA, appB) = try store.performAndWait { store throws(StoreError) in
            (try store.createApplication(key: a.key, name: "a", secret: a.secret.base64, at: 1),
             try store.createApplication(key: b.key, name: "b", secret: b.secret.base64, at: 1))
        }
        let lines = self.lines
        let log = ServerLog(level: .debug) { line in lines.append(line) }
        let api = RESTAPI(store: store, callControl: callControl?(store) ?? StoreHangUpControl(store: store), metrics: metrics, clock: clock, log: log)
        var configuration = EdgeConfiguration(listenAddresses: [.ipv4Loopback(port: 0)], loopCount: 1)
        configuration.httpLimits.maxBodySize = maxBodySize
        edge = try EdgeServer(configuration: configuration, handlers: EdgeHandlers(deferredHTTP: api.handler))
    }

    func logLines() -> [String] { lines.all }

    /// Shuts the edge down on a thread of its own without waiting: `shutdown` blocks for its
    /// grace period, and blocking the cooperative pool (2 threads here) would starve the
    /// REST tasks of the tests still running.
    func close() {
        let edge = self.edge, directory = self.directory
        Thread {
            edge.shutdown(gracePeriod: .milliseconds(500))
            try? FileManager.default.removeItem(atPath: directory)
        }.start()
    }

    func request(_ line: String, as application: Application, body: String = "") async throws -> RESTTestResponse {
        try await request(line, authorization: BasicCredentials(applicationKey: application.key, secret: application.secret).authorizationValue, body: body)
    }

    /// Sends `METHOD TARGET` and reads one response, on a thread of its own: blocking a
    /// thread of the cooperative pool, or of Dispatch's global queues that back it on Linux
    /// (about one per core), would starve the REST API's own tasks while every test waits.
    func request(_ line: String, authorization: String? = nil, headers: [(String, String)] = [], body: String = "") async throws -> RESTTestResponse {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try self.blockingRequest(line, authorization: authorization, headers: headers, body: body) })
            }.start()
        }
    }

    func blockingRequest(_ line: String, authorization: String?, headers: [(String, String)] = [], body: String) throws -> RESTTestResponse {
        let socket = try TCPSocket.connect(to: edge.localAddresses[0], timeout: .seconds(5))
        defer { socket.close() }
        var head = "\(line) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.utf8.count)\r\n" }
        let bytes = Array((head + "\r\n" + body).utf8)
        var offset = 0
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while offset < bytes.count, ContinuousClock.now < deadline {
            offset += try socket.write(bytes, from: offset)
            if offset < bytes.count { _ = socket.waitUntilWritable(timeout: .milliseconds(100)) }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let headRequest = line.hasPrefix("HEAD ")
        // Until one whole response is in (by Content-Length), the peer closes, or the deadline.
        reading: while ContinuousClock.now < deadline {
            if (try? RESTTestResponse(received, headRequest: headRequest)) != nil { break }
            guard socket.waitUntilReadable(timeout: .milliseconds(200)) else { continue }
            switch try? socket.read(into: &buffer) {
            case .bytes(let count)?: received += buffer[0..<count]
            case .wouldBlock?: continue
            case .endOfStream?, nil: break reading
            }
        }
        do { return try RESTTestResponse(received, headRequest: headRequest) } catch {
            throw RESTTestResponse.Incomplete(received: "\(error) stats \(edge.statistics) local \(socket.localAddress) remote \(socket.remoteAddress)")
        }
    }
}

/// Holds one of the shared pool's threads (a synchronous wait, on purpose) until released
/// or 30 s pass.
private func blockPoolThread(until blockers: PoolBlockers) {
    if blockers.release.wait(timeout: .now() + 30) == .timedOut {
        blockers.timedOut.withLock { $0 += 1 }
    }
}

private final class PoolBlockers: Sendable {
    let release = DispatchSemaphore(value: 0)
    let timedOut = Mutex(0)
}

/// Log lines collected from any thread.
final class RESTLogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

struct RESTTestResponse {
    var status: Int
    var headers: [(String, String)]
    var body: String

    struct Incomplete: Error, CustomStringConvertible {
        var received: String
        var description: String { "incomplete response: \(received.debugDescription)" }
    }

    init(_ bytes: [UInt8], headRequest: Bool) throws {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Incomplete(received: text) }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let statusText = lines.first?.split(separator: " ").dropFirst().first, let status = Int(statusText) else { throw Incomplete(received: text) }
        self.status = status
        headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        body = String(text[split.upperBound...])
        if !headRequest, status != 204, status != 304 {
            guard let length = header("Content-Length").flatMap(Int.init), body.utf8.count == length else { throw Incomplete(received: text) }
        }
    }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    func json() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }
}

/// Hangs up through the store, as the engine would at the end of the call: `canceled`
/// before the answer, `hungUp` after it.
struct StoreHangUpControl: CallControl {
    let store: StoreQueue

    func hangUp(callID: String, applicationKey: String) async -> HangUpOutcome {
        let outcome = try? await store.perform { store throws(StoreError) -> HangUpOutcome in
            guard let call = try store.call(id: callID, applicationKey: applicationKey) else { return .notFound }
            guard call.state != .ended else { return .alreadyEnded }
            _ = try store.finishCall(id: callID, cause: call.details.answeredTime == nil ? .canceled : .hungUp, at: 20_000)
            return .hungUp
        }
        return outcome ?? .notFound
    }

    func liveCallCounts() async -> [CallState: Int] {
        let counts = try? await store.perform { store throws(StoreError) in try store.callCountsByState() }
        return (counts ?? [:]).filter { $0.key != .ended }
    }
}
