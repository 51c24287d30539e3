import Dispatch
import Foundation
import ParleyMediaCore
import ParleyMediaLegCore
import ParleyCallCore
import Synchronization

/// Turns what a backend's SVAML asks to play into PCM clips (docs/backend.md, "Prompts"):
/// text through Debian's `espeak-ng` (`say`, and `#tts[text]` in a prompt), and WAV files
/// from the operator's prompt directory (`--prompt-directory`; `playFiles` ids and bare
/// names in a prompt), resolved inside it only. URLs (`#href[...]`) and SSML are not
/// fetched nor read: they fail with a reason.
///
/// Work runs on a queue of its own, at most `maximumConcurrentSyntheses` `espeak-ng`
/// processes at once, each killed after `synthesisTimeout`; `done` gets the result on that
/// queue, never on the engine's loop.
final class PromptLibrary: Sendable {
    typealias Clip = PromptTopology<CallLegID>.Clip

    /// Why a prompt cannot be played.
    struct Failure: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    /// One part of a prompt, in order.
    enum Part: Sendable, Hashable {
        case text(String, locale: String?)
        case file(String)
    }

    /// The longest text `espeak-ng` is given (SVAML's `say` limit; a prompt's `#tts[...]`).
    static let maximumTextCharacters = 600
    /// The largest WAV file read.
    static let maximumFileBytes = 16 << 20
    static let maximumConcurrentSyntheses = 4
    let synthesisTimeout: Duration
    /// Where `playFiles` names are looked up; nil: files are refused.
    let directory: String?
    /// The `espeak-ng` executable.
    let espeak: String
    private let queue = DispatchQueue(label: "parley.prompts", attributes: .concurrent)
    private let running = Mutex(0)

    init(directory: String?, espeak: String = "/usr/bin/espeak-ng", synthesisTimeout: Duration = .seconds(10)) {
        // Symbolic links resolved, as each file's path is, so the containment check compares
        // like with like.
        self.directory = directory.map { URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path }
        self.espeak = espeak
        self.synthesisTimeout = synthesisTimeout
    }

    /// The parts of a menu prompt or `park` prompt: `;`-separated items, each `#tts[text]`,
    /// `#ssml[...]`, `#href[url]` or a file name.
    static func parts(ofPrompt prompt: String, locale: String?) throws(Failure) -> [Part] {
        var parts: [Part] = []
        for item in prompt.split(separator: ";", omittingEmptySubsequences: true) {
            let text = item.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            if let inner = bracketed(text, tag: "#tts") {
                parts.append(.text(inner, locale: locale))
            } else if bracketed(text, tag: "#ssml") != nil {
                throw Failure(description: "SSML prompts are not supported (use #tts[...] or a file)")
            } else if bracketed(text, tag: "#href") != nil || text.contains("://") {
                throw Failure(description: "prompts from URLs are not fetched (put the file in the prompt directory)")
            } else {
                parts.append(.file(text))
            }
        }
        return parts
    }

    /// The parts of `playFiles` ids: each id a file name or `#tts[...]`.
    static func parts(ofFiles ids: [String], locale: String?) throws(Failure) -> [Part] {
        var parts: [Part] = []
        for id in ids { parts += try Self.parts(ofPrompt: id.replacingOccurrences(of: ";", with: ","), locale: locale) }
        return parts
    }

    private static func bracketed(_ text: String, tag: String) -> String? {
        guard text.lowercased().hasPrefix(tag + "["), text.hasSuffix("]") else { return nil }
        return String(text.dropFirst(tag.count + 1).dropLast())
    }

    /// Makes the clips of `parts`, in order, off the caller's thread.
    func clips(_ parts: [Part], done: @escaping @Sendable (Result<[Clip], Failure>) -> Void) {
        queue.async { [self] in
            var clips: [Clip] = []
            for part in parts {
                switch clip(part) {
                case .success(let clip): clips.append(clip)
                case .failure(let failure): return done(.failure(failure))
                }
            }
            done(.success(clips))
        }
    }

    private func clip(_ part: Part) -> Result<Clip, Failure> {
        switch part {
        case .file(let name): return file(name)
        case .text(let text, let locale): return synthesize(text, locale: locale)
        }
    }

    /// A WAV file of the prompt directory: a plain name or a relative path that stays inside.
    func file(_ name: String) -> Result<Clip, Failure> {
        guard let directory else { return .failure(Failure(description: "no --prompt-directory: files cannot be played")) }
        guard !name.isEmpty, !name.hasPrefix("/"), !name.split(separator: "/").contains("..") else {
            return .failure(Failure(description: "\"\(name)\" is not a name inside the prompt directory"))
        }
        let candidates = name.lowercased().hasSuffix(".wav") ? [name] : [name, name + ".wav"]
        for candidate in candidates {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(candidate).standardizedFileURL.resolvingSymlinksInPath().path
            guard path.hasPrefix(directory + "/") else {
                return .failure(Failure(description: "\"\(name)\" leads outside the prompt directory"))
            }
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                  (attributes[.type] as? FileAttributeType) == .typeRegular else { continue }
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            guard size <= Self.maximumFileBytes else {
                return .failure(Failure(description: "\"\(name)\" is \(size) bytes, over the \(Self.maximumFileBytes)-byte limit"))
            }
            do {
                return .success(Self.mono(try WAVFile.read(path: path)))
            } catch {
                return .failure(Failure(description: "\"\(name)\": \(error)"))
            }
        }
        return .failure(Failure(description: "no file \"\(name)\" in the prompt directory"))
    }

    /// Speech for `text` from `espeak-ng --stdout` (WAV, 22.05 kHz mono), within the timeout.
    func synthesize(_ text: String, locale: String?) -> Result<Clip, Failure> {
        guard text.count <= Self.maximumTextCharacters else {
            return .failure(Failure(description: "text of \(text.count) characters, over \(Self.maximumTextCharacters)"))
        }
        let admitted = running.withLock { count -> Bool in
            guard count < Self.maximumConcurrentSyntheses else { return false }
            count += 1
            return true
        }
        guard admitted else { return .failure(Failure(description: "\(Self.maximumConcurrentSyntheses) syntheses are running already")) }
        defer { running.withLock { $0 -= 1 } }
        let voice = Self.voice(of: locale)
        let spoken = speak(text, voice: voice)
        // A locale espeak-ng has no voice for speaks in its default voice (English).
        if case .failure = spoken, voice != nil { return speak(text, voice: nil) }
        return spoken
    }

    private func speak(_ text: String, voice: String?) -> Result<Clip, Failure> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: espeak)
        var arguments = ["--stdout"]
        if let voice { arguments += ["-v", voice] }
        // The text goes on stdin, never as an argument an option parser could read.
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch {
            return .failure(Failure(description: "cannot run \(espeak): \(error)"))
        }
        input.fileHandleForWriting.write(Data(text.utf8))
        try? input.fileHandleForWriting.close()
        let collected = Mutex<Data>(Data())
        let reader = DispatchGroup()
        reader.enter()
        DispatchQueue.global().async {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0 = data }
            reader.leave()
        }
        let timeout = DispatchTime.now() + .milliseconds(Int(synthesisTimeout.components.seconds * 1000))
        if reader.wait(timeout: timeout) == .timedOut {
            process.terminate()
            _ = reader.wait(timeout: .now() + .seconds(2))
            return .failure(Failure(description: "espeak-ng took longer than \(synthesisTimeout)"))
        }
        process.waitUntilExit()
        _ = errors.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationStatus == 0 else {
            return .failure(Failure(description: "espeak-ng exited with \(process.terminationStatus)"))
        }
        let bytes = collected.withLock { [UInt8]($0) }
        do {
            return .success(Self.mono(try WAVFile(parsing: Self.fixingStreamedSizes(bytes))))
        } catch {
            return .failure(Failure(description: "espeak-ng's output: \(error)"))
        }
    }

    /// `espeak-ng --stdout` cannot seek back, so its RIFF and data sizes may say 0x7fffffff
    /// or 0: they are set from the bytes that came.
    static func fixingStreamedSizes(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46] else { return bytes }
        var fixed = bytes
        func put(_ value: Int, at offset: Int) {
            let v = UInt32(clamping: value)
            fixed[offset] = UInt8(v & 0xff); fixed[offset + 1] = UInt8(v >> 8 & 0xff)
            fixed[offset + 2] = UInt8(v >> 16 & 0xff); fixed[offset + 3] = UInt8(v >> 24)
        }
        put(bytes.count - 8, at: 4)
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            if bytes[offset..<offset + 4] == [0x64, 0x61, 0x74, 0x61] {  // "data"
                put(bytes.count - offset - 8, at: offset + 4)
                break
            }
            offset += 8 + size + (size & 1)
        }
        return fixed
    }

    /// An espeak-ng voice for a Sinch locale (`en-US`, `sv-SE`...): its language, lower case.
    static func voice(of locale: String?) -> String? {
        guard let locale, !locale.isEmpty else { return nil }
        let voice = locale.lowercased().replacingOccurrences(of: "_", with: "-")
        guard voice.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d || ($0 >= 0x30 && $0 <= 0x39) }), voice.count <= 16 else {
            return nil
        }
        // espeak-ng knows `en-us` and `sv`, not `sv-se`: the language alone unless English.
        if voice.hasPrefix("en-") { return voice }
        return String(voice.prefix { $0 != "-" })
    }

    /// A clip from a WAV file: the first channel.
    static func mono(_ wav: WAVFile) -> Clip {
        guard wav.channels > 1 else { return Clip(samples: wav.samples, sampleRate: wav.sampleRate) }
        let samples = stride(from: 0, to: wav.samples.count, by: wav.channels).map { wav.samples[$0] }
        return Clip(samples: samples, sampleRate: wav.sampleRate)
    }
}
