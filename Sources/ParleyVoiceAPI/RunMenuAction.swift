import ParleyWireCore

/// `runMenu`: plays DTMF menus and sends the result to the backend as a PIE.
public struct RunMenuAction: Sendable, Hashable {
    /// The id of the menu run first when ``mainMenu`` is not given.
    public static let defaultMainMenu = "main"

    /// Whether a key press stops a prompt (default true).
    public var barge: Bool?
    /// The text-to-speech voice of the prompts.
    public var locale: String?
    /// The id of the first menu (default `main`).
    public var mainMenu: String?
    /// Whether spoken answers are accepted (Parley collects DTMF only and ignores it).
    public var enableVoice: Bool?
    /// The menus; their ids are unique and every `menu(id)` names one of them.
    public var menus: [Menu]

    /// A menu action, refused when ids repeat, the main menu is missing, or an option
    /// leads to a menu that does not exist.
    public init(barge: Bool? = nil, locale: String? = nil, mainMenu: String? = nil, enableVoice: Bool? = nil,
                menus: [Menu]) throws(VoiceAPIError) {
        self.barge = barge
        self.locale = locale
        self.mainMenu = mainMenu
        self.enableVoice = enableVoice
        self.menus = menus
        try Self.check(menus: menus, mainMenu: mainMenu, path: "action")
    }

    private init(checked menus: [Menu], barge: Bool?, locale: String?, mainMenu: String?, enableVoice: Bool?) {
        self.barge = barge
        self.locale = locale
        self.mainMenu = mainMenu
        self.enableVoice = enableVoice
        self.menus = menus
    }

    /// The id of the first menu run.
    public var firstMenuID: String { mainMenu ?? Self.defaultMainMenu }

    /// The menu with `id`.
    public func menu(_ id: String) -> Menu? {
        menus.first { $0.id == id }
    }

    func write(into object: inout JSONObject) {
        if let barge { object.append("barge", barge) }
        object.append("locale", ifPresent: locale)
        object.append("mainMenu", ifPresent: mainMenu)
        if let enableVoice { object.append("enableVoice", enableVoice) }
        object.append("menus", .array(menus.map(\.json)))
    }

    static func read(_ reader: FieldReader) throws(VoiceAPIError) -> RunMenuAction {
        guard let elements = try reader.optionalObjects("menus", maxCount: VoiceAPILimits.maxMenus), !elements.isEmpty else {
            throw reader.failure("menus", "must hold at least one menu")
        }
        var menus: [Menu] = []
        for element in elements { menus.append(try Menu.read(element)) }
        let mainMenu = try reader.optionalString("mainMenu", maxBytes: VoiceAPILimits.maxIdentifierBytes)
        try check(menus: menus, mainMenu: mainMenu, path: reader.path)
        return RunMenuAction(checked: menus, barge: try reader.optionalBool("barge"),
                             locale: try reader.optionalString("locale", maxBytes: 64), mainMenu: mainMenu,
                             enableVoice: try reader.optionalBool("enableVoice"))
    }

    private static func check(menus: [Menu], mainMenu: String?, path: String) throws(VoiceAPIError) {
        let prefix = path.isEmpty ? "" : path + "."
        guard !menus.isEmpty else { throw VoiceAPIError(.invalidField, field: prefix + "menus", "must hold at least one menu") }
        var ids = Set<String>()
        for (index, menu) in menus.enumerated() where !ids.insert(menu.id).inserted {
            throw VoiceAPIError(.invalidField, field: "\(prefix)menus[\(index)].id", "\(FieldReader.quoted(menu.id)) names two menus")
        }
        let first = mainMenu ?? defaultMainMenu
        guard ids.contains(first) else {
            throw VoiceAPIError(.invalidField, field: prefix + (mainMenu == nil ? "menus" : "mainMenu"),
                                "no menu has the id \(FieldReader.quoted(first)) to start with")
        }
        for (menuIndex, menu) in menus.enumerated() {
            for (optionIndex, option) in menu.options.enumerated() {
                if case .menu(let target) = option.action, !ids.contains(target) {
                    throw VoiceAPIError(.invalidField, field: "\(prefix)menus[\(menuIndex)].options[\(optionIndex)].action",
                                        "no menu has the id \(FieldReader.quoted(target))")
                }
            }
        }
    }
}
