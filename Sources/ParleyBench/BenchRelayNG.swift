import ParleyWireCore
import Glibc
import ParleyNetCore
import ParleyNetLinux

// What the relay comparison needs to drive rtpengine: bencode, the ng control protocol over
// UDP, the few SDP lines involved, and base64 for SDES keys (RFC 4568 `inline:` keys).

/// A bencode value (BitTorrent's encoding, used by rtpengine's ng protocol).
indirect enum Bencode {
    case integer(Int)
    case bytes([UInt8])
    case list([Bencode])
    case dictionary([String: Bencode])

    static func string(_ text: String) -> Bencode { .bytes(Array(text.utf8)) }

    var text: String? {
        if case .bytes(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    subscript(key: String) -> Bencode? {
        if case .dictionary(let entries) = self { return entries[key] }
        return nil
    }

    /// Dictionary keys are written in sorted order, as bencode requires.
    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }

    private func append(to out: inout [UInt8]) {
        switch self {
        case .integer(let value):
            out += Array("i\(value)e".utf8)
        case .bytes(let bytes):
            out += Array("\(bytes.count):".utf8)
            out += bytes
        case .list(let items):
            out.append(UInt8(ascii: "l"))
            for item in items { item.append(to: &out) }
            out.append(UInt8(ascii: "e"))
        case .dictionary(let entries):
            out.append(UInt8(ascii: "d"))
            for key in entries.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                Bencode.string(key).append(to: &out)
                entries[key]!.append(to: &out)
            }
            out.append(UInt8(ascii: "e"))
        }
    }

    /// Decodes one value that must fill `bytes`; nil for anything malformed.
    static func decode(_ bytes: [UInt8]) -> Bencode? {
        var index = 0
        guard let value = decodeValue(bytes, &index, depth: 0), index == bytes.count else { return nil }
        return value
    }

    private static func decodeValue(_ bytes: [UInt8], _ index: inout Int, depth: Int) -> Bencode? {
        guard depth < 32, index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "i"):
            guard let end = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "e")),
                  let value = Int(String(decoding: bytes[(index + 1)..<end], as: UTF8.self)) else { return nil }
            index = end + 1
            return .integer(value)
        case UInt8(ascii: "l"):
            index += 1
            var items: [Bencode] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: "e") {
                guard let item = decodeValue(bytes, &index, depth: depth + 1) else { return nil }
                items.append(item)
            }
            guard index < bytes.count else { return nil }
            index += 1
            return .list(items)
        case UInt8(ascii: "d"):
            index += 1
            var entries: [String: Bencode] = [:]
            while index < bytes.count, bytes[index] != UInt8(ascii: "e") {
                guard let key = decodeValue(bytes, &index, depth: depth + 1)?.text,
                      let value = decodeValue(bytes, &index, depth: depth + 1) else { return nil }
                entries[key] = value
            }
            guard index < bytes.count else { return nil }
            index += 1
            return .dictionary(entries)
        default:
            guard let colon = bytes[index...].firstIndex(of: UInt8(ascii: ":")), colon - index <= 9,
                  let length = Int(String(decoding: bytes[index..<colon], as: UTF8.self)),
                  length >= 0, length <= bytes.count - colon - 1 else { return nil }
            index = colon + 1 + length
            return .bytes(Array(bytes[(colon + 1)..<(colon + 1 + length)]))
        }
    }
}

/// A client of rtpengine's ng protocol: `cookie SP bencoded-dictionary` datagrams over UDP,
/// the reply carrying the same cookie.
final class NGClient {
    let socket: UDPSocket
    let server: SocketAddress
    private var nextCookie = 1

    init(server: SocketAddress) throws {
        self.server = server
        socket = try UDPSocket(bindingTo: .ipv4Loopback(port: 0))
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `command` and waits for its reply (up to 3 tries of `timeoutMs`).
    func call(_ command: [String: Bencode], timeoutMs: Int32 = 1000) throws -> Bencode {
        let cookie = "parley\(nextCookie)"
        nextCookie += 1
        let message = Array("\(cookie) ".utf8) + Bencode.dictionary(command).encoded()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        for _ in 0..<3 {
            try socket.send(message, to: server)
            var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
            var waited: Int32 = 0
            while waited < timeoutMs {
                _ = poll(&descriptor, 1, 50)
                waited += 50
                guard let (count, _) = try socket.receive(into: buffer) else { continue }
                let reply = Array(buffer[..<count])
                guard let space = reply.firstIndex(of: UInt8(ascii: " ")),
                      String(decoding: reply[..<space], as: UTF8.self) == cookie else { continue }
                guard let body = Bencode.decode(Array(reply[(space + 1)...])) else {
                    throw Failure(description: "undecodable ng reply to \(command["command"]?.text ?? "?")")
                }
                if body["result"]?.text == "error" {
                    throw Failure(description: "rtpengine refused \(command["command"]?.text ?? "?"): \(body["error-reason"]?.text ?? "no reason")")
                }
                return body
            }
        }
        throw Failure(description: "no ng reply from \(server) to \(command["command"]?.text ?? "?")")
    }
}

/// The SDP of one audio stream offering SDES-SRTP (RFC 4568) with one crypto line.
func sdesAudioSDP(port: UInt16, cryptoTag: Int, suite: String, key: [UInt8]) -> String {
    [
        "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
        "m=audio \(port) RTP/SAVP 111", "a=rtpmap:111 opus/48000/2",
        "a=crypto:\(cryptoTag) \(suite) inline:\(Base64.encode(key))", "a=sendrecv", "",
    ].joined(separator: "\r\n")
}

/// The first `m=audio` port of an SDP.
func sdpAudioPort(_ sdp: String) -> UInt16? {
    for line in sdp.split(whereSeparator: \.isNewline) where line.hasPrefix("m=audio ") {
        let fields = line.split(separator: " ")
        if fields.count > 1 { return UInt16(fields[1]) }
    }
    return nil
}

/// The `a=crypto` lines of an SDP: tag, suite and the decoded inline key.
func sdpCryptoLines(_ sdp: String) -> [(tag: Int, suite: String, key: [UInt8])] {
    var result: [(tag: Int, suite: String, key: [UInt8])] = []
    for line in sdp.split(whereSeparator: \.isNewline) where line.hasPrefix("a=crypto:") {
        let fields = line.dropFirst("a=crypto:".count).split(separator: " ")
        guard fields.count >= 3, let tag = Int(fields[0]), fields[2].hasPrefix("inline:") else { continue }
        let keyText = fields[2].dropFirst("inline:".count).split(separator: "|").first ?? ""
        // SDES keys often omit the padding that strict Base64 wants.
        let padded = String(keyText) + String(repeating: "=", count: (4 - keyText.utf8.count % 4) % 4)
        guard let key = try? Base64.decode(padded) else { continue }
        result.append((tag, String(fields[1]), key))
    }
    return result
}
