// MIRROR of Apple's AVFoundation: on Apple platforms it re-exports AVFAudio (where
// `AVAudioSession` lives since iOS 14), so `import AVFoundation` sees AVAudioSession.
// https://developer.apple.com/documentation/avfaudio ("AVFAudio ... also available through AVFoundation").
@_exported import AVFAudio
