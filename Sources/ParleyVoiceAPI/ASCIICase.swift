/// ASCII case folding for names the Sinch documents spell in more than one case
/// (`connectMXP`, `connectMxp`; `userName`, `username`). Only ASCII letters fold, so no
/// locale can make two different names equal.
enum ASCIICase {
    static func lower(_ text: String) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && lower(a) == lower(b)
    }
}
