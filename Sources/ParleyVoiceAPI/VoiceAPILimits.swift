/// The bounds every decoder of this module holds untrusted input to, so a hostile or broken
/// peer costs a bounded amount of memory and time and gets a clear error.
public enum VoiceAPILimits {
    /// The largest callback or SVAML body read: 64 KiB, far above any real answer (a menu
    /// tree with prompts is a few KiB).
    public static let maxBodyBytes = 64 * 1024
    /// How deep arrays and objects may nest (SVAML needs 5: answer, action, menus, menu, options).
    public static let maxDepth = 16
    /// The longest free text field (a prompt, a custom string, a URL), in UTF-8 bytes.
    public static let maxTextBytes = 4096
    /// The longest identifier (call id, application key, conference id, menu id), in UTF-8 bytes.
    public static let maxIdentifierBytes = 256
    /// The longest conference id, in characters, as Sinch documents for `connectConf`.
    public static let maxConferenceIDCharacters = 64
    /// The longest `say` text, in characters (extended grapheme clusters).
    public static let maxSayCharacters = 600
    /// The most instructions one SVAML answer holds.
    public static let maxInstructions = 32
    /// The most call headers one callback or action carries.
    public static let maxCallHeaders = 32
    /// The most menus one `runMenu` holds.
    public static let maxMenus = 16
    /// The most options one menu holds (one per key of a phone's keypad, and then some).
    public static let maxMenuOptions = 16
    /// The most files one `playFiles` plays.
    public static let maxPlayFiles = 32
    /// The longest DTMF string (`sendDtmf`, `connectPstn.dtmf`, a menu option's keys).
    public static let maxDTMFCharacters = 64
    /// The longest `maxDuration` Sinch documents, in seconds (4 hours).
    public static let maxDurationSeconds: Int64 = 14_400
}
