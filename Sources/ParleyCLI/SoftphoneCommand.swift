import Foundation
import ParleyMediaCore

/// `parley call <destination>` and `parley listen`: the softphone. Parses and checks everything
/// it can before connecting (flags, token, the WAV file to play, the recording's
/// directory), then hands over to `SoftphoneRunner`, which never returns.
enum SoftphoneCommand {
    static func help(_ command: String) -> String {
        let common = """
              --server URL          the server, http://HOST:PORT (the WebSocket URL is derived)
              --app KEY             the application key
              --secret SECRET       the application secret: mint a fresh token for every connect
              --token JWT           or one ready-made user token (good for one connect)
              --ttl SECONDS         lifetime of minted tokens (default 600)
              --as USER             the user this device signs in as (optional with --token)
              --device-id ID        this device's id (default: random per run)
              --play FILE.wav       send this WAV file (looped) instead of a tone
              --tone HZ             send a tone (default \(command == "listen" ? "1000" : "440") Hz)
              --record FILE.wav     write the received audio to FILE.wav
              --device[=NAME]       talk through an ALSA device (capture and playback; default:
                                    the system's default device) instead of --play/--tone/--record
              --duration SECONDS    hang up this long after the call is established
              --dtmf TONES          send DTMF tones (0-9 * # A-D) once the call is established
                                    (calls to phone numbers and SIP addresses)
              --json                one JSON object per line instead of text
              --stats-interval S    seconds between statistics lines (default 1 on a terminal, else 5)
              --connect-timeout S   give up signing in after S seconds (default 10)
              --ca-file FILE        PEM CAs to trust for an https:// server (default: the system store)

            """
        if command == "conference" {
            return """
                usage: parley conference ROOM --server URL --app KEY (--secret SECRET | --token JWT) --as ME [options]

                Joins the application's conference room ROOM (1-64 of A-Z a-z 0-9 - _ =):
                everyone in it hears everyone else. Prints each call event with its time,
                live statistics, and a summary at the end. Ctrl-C leaves. Exit status 0
                when the call was established and ended hungUp; docs/softphone.md lists
                the others.

                \(common)  --header NAME=VALUE   a call header (repeatable)

                """
        }
        if command == "call" {
            return """
                usage: parley call DESTINATION --server URL --app KEY (--secret SECRET | --token JWT) --as ME [options]

                Calls DESTINATION: a user id, a phone number (+ and E.164 digits) or a SIP
                address ([sip:|sips:]user@domain[:port][;transport=udp|tcp|tls]); prints each call
                event with its time, live statistics, and a summary at the end. Ctrl-C hangs
                up. Exit status 0 when the call was established and ended hungUp;
                docs/softphone.md lists the others.

                \(common)  --phone NUMBER        call this phone number (instead of DESTINATION)
                  --sip ADDRESS         call this SIP address (instead of DESTINATION)
                  --cli NUMBER          the caller id shown on a call to a phone number
                  --header NAME=VALUE   a call header (repeatable); toward a phone number or SIP
                                        address only x-... headers (sent on the INVITE)
                  --display-name NAME   the name the callee's devices show for you (push, call screen)

                """
        }
        return """
            usage: parley listen --server URL --app KEY (--secret SECRET | --token JWT) --as ME [options]

            Waits for calls. Enter answers a ringing call, d then Enter declines it, h then
            Enter hangs up. Ctrl-C hangs up (or stops listening between calls).

            \(common)  --answer              answer every call at once
              --answer-delay S      with --answer: wait S seconds first
              --decline             decline every call
              --count N             exit after N calls (0: never; default 1 with
                                    --answer or --decline, else 0)
              --push-token TOKEN    register this push token once signed in (APNs VoIP:
                                    the PushKit token in hex; FCM: the registration token)
              --push-type T         apnsVoip (default) or fcm
              --push-environment E  APNs: sandbox or production (default)
              --push-app-id ID      the bundle id or package name (needed with --push-token)
              --push-store FILE     keep the push registration (token, push key) in FILE
                                    (default: in memory, for this run only)
              --relay-push FILE     a received push's data (JSON with "parley", or the JWS):
                                    report it to the system and relay it, as a woken app
                                    does (needs --push-store and --device-id)

            """
    }

    static func main(command: String, _ arguments: [String]) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            print(help(command), terminator: "")
            return 0
        }
        let options: SoftphoneOptions
        let pushPayload: [String: String]?
        do throws(SoftphoneUsageError) {
            options = try SoftphoneOptions.parse(command: command, arguments)
            try checkFiles(options)
            pushPayload = try options.relayPushPath.map { path throws(SoftphoneUsageError) in try loadPushPayload(path: path) }
        } catch {
            FileHandle.standardError.write(Data("parley \(command): \(error.message)\n".utf8))
            return SoftphoneExitCode.usage.rawValue
        }
        SoftphoneRunner.run(options, pushPayload: pushPayload)
    }

    /// The largest push payload file read: an APNs payload is at most 5 KB.
    static let maximumPushPayloadBytes = 65_536

    /// A received push's data, as an app gets it: a JSON object with the `parley` JWS
    /// (the APNs body or the FCM `data`, other members ignored), or the bare JWS.
    static func loadPushPayload(path: String) throws(SoftphoneUsageError) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SoftphoneUsageError("--relay-push \(path): cannot read the file")
        }
        guard data.count <= maximumPushPayloadBytes else {
            throw SoftphoneUsageError("--relay-push \(path): \(data.count) bytes; a push payload is at most \(maximumPushPayloadBytes)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("{") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                  let jws = object["parley"] as? String else {
                throw SoftphoneUsageError("--relay-push \(path): a JSON object, but without a \"parley\" string member")
            }
            return ["parley": jws]
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let base64URL = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(base64URL.contains) }) else {
            throw SoftphoneUsageError("--relay-push \(path): neither a push's JSON data with a \"parley\" member nor a compact JWS")
        }
        return ["parley": text]
    }

    /// The WAV file to play must decode, and the recording's directory must exist: a
    /// typo should fail now, not after the callee answered.
    static func checkFiles(_ options: SoftphoneOptions) throws(SoftphoneUsageError) {
        if case .wavFile(let path) = options.source {
            do { _ = try WAVFile.read(path: path) } catch {
                throw SoftphoneUsageError("--play \(path): \(error)")
            }
        }
        if let relay = options.relayPushPath, let store = options.pushStorePath, !FileManager.default.fileExists(atPath: store) {
            throw SoftphoneUsageError("--relay-push \(relay): no registration in --push-store \(store) (register first with --push-token and this --push-store)")
        }
        if let store = options.pushStorePath {
            let directory = (store as NSString).deletingLastPathComponent
            let parent = directory.isEmpty ? "." : directory
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue,
                  FileManager.default.isWritableFile(atPath: parent) else {
                throw SoftphoneUsageError("--push-store \(store): directory '\(parent)' does not exist or is not writable")
            }
        }
        if let record = options.recordPath {
            let directory = (record as NSString).deletingLastPathComponent
            var isDirectory: ObjCBool = false
            let parent = directory.isEmpty ? "." : directory
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue,
                  FileManager.default.isWritableFile(atPath: parent) else {
                throw SoftphoneUsageError("--record \(record): directory '\(parent)' does not exist or is not writable")
            }
        }
    }
}
