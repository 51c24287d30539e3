import Foundation
import ParleyWireCore

/// `parley inspect <format> [FILE] [--hex] [--password PW]`: decodes one message and
/// prints it as JSON. Any problem (bad flags, unreadable file, invalid message) prints
/// one line on standard error and returns exit status 2.
enum InspectCommand {
    /// Inputs larger than this are refused before parsing; no wire message we inspect
    /// comes near it, and it keeps a stray `parley inspect sdp < /dev/zero` bounded.
    static let maximumInputBytes = 16 << 20

    struct Options {
        var format: InspectFormat
        var path: String?
        var hex = false
        var password: String?
        var telephoneEventPayloadType: UInt8?
    }

    /// A failure reported to the user as one line, exit status 2.
    struct Failure: Error {
        let message: String
    }

    static let help = """
        usage: parley inspect stun|rtp|rtcp|sdp|ws|signaling [FILE] [--hex] [--password PW]
                             [--telephone-event PT]

        Reads one message from FILE, or standard input when FILE is absent or '-', and
        prints it decoded as JSON on standard output.

          --hex            the input is hex text (whitespace, ':' and a leading 0x ignored)
          --password PW    STUN only: verify MESSAGE-INTEGRITY(-SHA256) with this
                           short-term password and report the verdict
          --telephone-event PT
                           RTP only: when the packet's payload type is PT, also decode
                           its payload as RFC 4733 telephone events

        Invalid input prints one line naming what is wrong and where, and exits with 2.

        """

    static func main(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(help, terminator: "")
            return 0
        }
        do throws(Failure) {
            let options = try parse(arguments)
            let input = try readInput(options)
            let json = try options.format.inspect(input, options: options)
            FileHandle.standardOutput.write(Data((json + "\n").utf8))
            return 0
        } catch {
            FileHandle.standardError.write(Data("parley inspect: \(error.message)\n".utf8))
            return 2
        }
    }

    static func parse(_ arguments: [String]) throws(Failure) -> Options {
        var remaining = arguments[...]
        guard let formatName = remaining.popFirst() else {
            throw Failure(message: "missing format: one of \(InspectFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let format = InspectFormat(rawValue: formatName) else {
            throw Failure(message: "unknown format '\(formatName)': expected one of \(InspectFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var options = Options(format: format)
        while let argument = remaining.popFirst() {
            switch argument {
            case "--hex":
                options.hex = true
            case "--password":
                guard let value = remaining.popFirst() else { throw Failure(message: "--password needs a value") }
                options.password = value
            case _ where argument.hasPrefix("--password="):
                options.password = String(argument.dropFirst("--password=".count))
            case "--telephone-event":
                guard let value = remaining.popFirst() else { throw Failure(message: "--telephone-event needs a payload type") }
                guard let payloadType = UInt8(value), payloadType < 128 else {
                    throw Failure(message: "--telephone-event needs a payload type from 0 to 127, not '\(value)'")
                }
                options.telephoneEventPayloadType = payloadType
            case _ where argument.hasPrefix("-") && argument != "-":
                throw Failure(message: "unknown option '\(argument)'")
            default:
                guard options.path == nil else { throw Failure(message: "more than one input file given ('\(options.path!)' and '\(argument)')") }
                options.path = argument
            }
        }
        if options.password != nil && format != .stun {
            throw Failure(message: "--password applies only to stun")
        }
        if options.telephoneEventPayloadType != nil && format != .rtp {
            throw Failure(message: "--telephone-event applies only to rtp")
        }
        return options
    }

    static func readInput(_ options: Options) throws(Failure) -> [UInt8] {
        let handle: FileHandle
        let name: String
        if let path = options.path, path != "-" {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw Failure(message: "cannot read '\(path)': no such file")
            }
            guard !isDirectory.boolValue, let opened = FileHandle(forReadingAtPath: path) else {
                throw Failure(message: "cannot read '\(path)': not a readable file")
            }
            handle = opened
            name = path
        } else {
            handle = FileHandle.standardInput
            name = "standard input"
        }
        var bytes: [UInt8] = []
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: 1 << 16) ?? Data()
            } catch {
                throw Failure(message: "cannot read \(name): \(oneLine(error.localizedDescription))")
            }
            if chunk.isEmpty { break }
            bytes.append(contentsOf: chunk)
            if bytes.count > maximumInputBytes {
                throw Failure(message: "\(name) is larger than \(maximumInputBytes) bytes; one message is expected")
            }
        }
        if options.hex {
            do {
                return try Hex.decode(String(decoding: bytes, as: UTF8.self))
            } catch {
                throw Failure(message: "\(name): \(error.description)")
            }
        }
        return bytes
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Pretty JSON of an inspected value, keys sorted so output is stable across runs.
    static func json(_ value: some Encodable) throws(Failure) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw Failure(message: "cannot encode result as JSON: \(oneLine(String(describing: error)))")
        }
    }
}
