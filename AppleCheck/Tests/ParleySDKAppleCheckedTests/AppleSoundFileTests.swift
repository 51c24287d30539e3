import AVFAudio
import Foundation
import ParleyMediaCore
@_spi(ParleyEngines) import ParleySDKCore
@testable import ParleySDKAppleChecked
import Testing

/// Sound files on the Apple media engine: `AVAudioPlayer` (here its mirror, which reads
/// PCM WAV and throws as Apple's does for a missing or unreadable file).
@Suite struct AppleSoundFileTests {
    static func wav(seconds: Double, in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("tone-\(seconds).wav").path
        var tone = ToneGenerator(frequency: 425, amplitude: 0.3, sampleRate: 8_000)
        try WAVFile(sampleRate: 8_000, samples: tone.next(count: Int(8_000 * seconds))).write(path: path)
        return path
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("apple-sound-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func waitUntil(_ seconds: Double, _ condition: () -> Bool) async throws -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test func aFilePlaysToItsEndALoopUntilStoppedAndANewFileReplacesTheOld() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = AppleAudioEngine(usesCallKitAudioSession: false)
        let short = try Self.wav(seconds: 0.2, in: directory)
        try engine.startPlayingSoundFile(withPath: short, looping: false)
        #expect(engine.isPlayingSoundFile)
        #expect(try await Self.waitUntil(5) { !engine.isPlayingSoundFile }, "a one-shot file ends by itself")

        try engine.startPlayingSoundFile(withPath: short, looping: true)
        try await Task.sleep(for: .milliseconds(600))
        #expect(engine.isPlayingSoundFile, "a looping file plays past its length")
        let long = try Self.wav(seconds: 3, in: directory)
        try engine.startPlayingSoundFile(withPath: long, looping: false)
        #expect(engine.isPlayingSoundFile)
        engine.stopPlayingSoundFile()
        #expect(!engine.isPlayingSoundFile)
        engine.stopPlayingSoundFile()
    }

    @Test func aMissingOrUnreadableFileIsAnInvalidArgument() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = AppleAudioEngine(usesCallKitAudioSession: false)
        let text = directory.appendingPathComponent("notes.wav").path
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: text))
        for path in [directory.appendingPathComponent("missing.wav").path, text] {
            #expect {
                try engine.startPlayingSoundFile(withPath: path, looping: false)
            } throws: { error in
                (error as? ParleyClientError)?.code == "invalid_argument" && (error as? ParleyClientError)?.message.contains(path) == true
            }
        }
        #expect(!engine.isPlayingSoundFile)
    }
}
