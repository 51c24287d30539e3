/// A `runMenu` carried out, sans-I/O: keys and time in; prompts to play, a deadline and,
/// at the end, the result to send as a PIE out. The call engine owns the audio and the
/// timer; this type only decides.
///
/// How it runs (Parley's reading of Sinch's menu fields; the defaults are Parley's):
/// - A menu starts by playing its `mainPrompt`. With `barge` (the default) a key stops the
///   prompt and counts; without it, keys pressed during a prompt are ignored.
/// - The wait for a key starts when the prompt has played (``promptFinished(at:)``) and
///   lasts `timeoutMills` (default ``defaultTimeoutMilliseconds``), again after every key.
///   `maxTimeoutMills`, when given, bounds one attempt's input from its first wait, however
///   many keys come.
/// - Keys gather until they equal an option's `dtmf` (the option's action runs:
///   `menu(id)` starts that menu, `return(value)` ends with a `return` result), or until
///   `maxDigits` (default 1) keys are in: a menu without options ends with a `sequence`
///   result of the keys; a menu with options counts an invalid input.
/// - A timeout with keys gathered is the same as reaching `maxDigits`; a timeout with none
///   counts a timeout. Each timeout or invalid input replays `repeatPrompt` (or the main
///   prompt) until `repeats` (default ``defaultRepeats``) replays are used up; then the
///   menu ends with a `timeout` or `invalidinput` result.
/// - A hang-up ends it with a `hangup` result.
public struct MenuSession: Sendable {
    /// The wait for a key when a menu gives no `timeoutMills`.
    public static let defaultTimeoutMilliseconds: Int64 = 5_000
    /// The replays after a timeout or an invalid input when a menu gives no `repeats`.
    public static let defaultRepeats: Int64 = 2

    /// What the call engine does next.
    public enum Output: Sendable, Hashable {
        /// Play this prompt (a menu's prompt text, as the backend wrote it) to the caller.
        case play(String)
        /// Stop the prompt playing now (the caller barged in).
        case stopPrompt
        /// The menu is over: send this result to the backend as a PIE.
        case finished(MenuResult)
    }

    public let action: RunMenuAction
    /// The menu running now.
    public private(set) var menu: Menu
    /// The keys gathered in this menu so far.
    public private(set) var keys = ""
    /// When the engine should call ``timeout(at:)`` if nothing happens first; nil while a
    /// prompt plays or after the end.
    public private(set) var deadline: ContinuousClock.Instant?
    /// The result, once the menu is over.
    public private(set) var result: MenuResult?

    private var prompting = false
    private var replays: Int64 = 0
    private var inputLimit: ContinuousClock.Instant?

    /// A session for `action`; call ``start(at:)`` to play the first prompt.
    public init(action: RunMenuAction) {
        self.action = action
        // RunMenuAction guarantees the first menu exists.
        self.menu = action.menu(action.firstMenuID) ?? action.menus[0]
    }

    private var barge: Bool { action.barge ?? true }
    private var timeout: Duration { .milliseconds(menu.timeoutMilliseconds ?? Self.defaultTimeoutMilliseconds) }
    private var maxDigits: Int { Int(menu.maxDigits ?? 1) }

    /// Starts the first menu.
    public mutating func start(at now: ContinuousClock.Instant) -> [Output] {
        enter(menu, at: now)
    }

    /// The prompt the engine was told to play has ended; the wait for keys starts.
    public mutating func promptFinished(at now: ContinuousClock.Instant) -> [Output] {
        guard result == nil, prompting else { return [] }
        prompting = false
        startWaiting(at: now)
        return []
    }

    /// The caller pressed `key` (`0`-`9`, `*`, `#`; anything else is ignored).
    public mutating func key(_ key: Character, at now: ContinuousClock.Instant) -> [Output] {
        guard result == nil, let ascii = key.asciiValue, DTMF.isKey(ascii) else { return [] }
        var outputs: [Output] = []
        if prompting {
            guard barge else { return [] }
            prompting = false
            outputs.append(.stopPrompt)
        }
        keys.append(key)
        if let option = menu.options.first(where: { $0.dtmf == keys }) {
            switch option.action {
            case .return(let value):
                return outputs + finish(.return, value: value)
            case .menu(let id):
                guard let next = action.menu(id) else { return outputs + finish(.error, value: id) }
                replays = 0
                return outputs + enter(next, at: now)
            }
        }
        let couldStillMatch = menu.options.contains { $0.dtmf.hasPrefix(keys) }
        if keys.count >= maxDigits && !couldStillMatch {
            return outputs + inputComplete(at: now)
        }
        startWaiting(at: now)
        return outputs
    }

    /// The deadline passed (the engine may call early; nothing happens before ``deadline``).
    public mutating func timeout(at now: ContinuousClock.Instant) -> [Output] {
        guard result == nil, let deadline, now >= deadline else { return [] }
        if !keys.isEmpty { return inputComplete(at: now) }
        return retry(.timeout, at: now)
    }

    /// The caller hung up.
    public mutating func hangup() -> [Output] {
        guard result == nil else { return [] }
        return finish(.hangup, value: keys)
    }

    // MARK: Steps

    private mutating func enter(_ next: Menu, at now: ContinuousClock.Instant) -> [Output] {
        menu = next
        keys = ""
        inputLimit = nil
        return prompt(next.mainPrompt, at: now)
    }

    private mutating func prompt(_ text: String?, at now: ContinuousClock.Instant) -> [Output] {
        guard let text, !text.isEmpty else {
            prompting = false
            startWaiting(at: now)
            return []
        }
        prompting = true
        deadline = nil
        return [.play(text)]
    }

    private mutating func startWaiting(at now: ContinuousClock.Instant) {
        if inputLimit == nil, let limit = menu.maxTimeoutMilliseconds {
            inputLimit = now.advanced(by: .milliseconds(limit))
        }
        let next = now.advanced(by: timeout)
        deadline = inputLimit.map { min($0, next) } ?? next
    }

    /// The keys gathered are the whole input: a sequence for a menu without options, an
    /// invalid choice for one with options.
    private mutating func inputComplete(at now: ContinuousClock.Instant) -> [Output] {
        if menu.options.isEmpty { return finish(.sequence, value: keys) }
        return retry(.invalidInput, at: now)
    }

    private mutating func retry(_ failure: MenuResult.Kind, at now: ContinuousClock.Instant) -> [Output] {
        guard replays < (menu.repeats ?? Self.defaultRepeats) else { return finish(failure, value: keys) }
        replays += 1
        keys = ""
        inputLimit = nil
        return prompt(menu.repeatPrompt ?? menu.mainPrompt, at: now)
    }

    private mutating func finish(_ kind: MenuResult.Kind, value: String) -> [Output] {
        let finished = MenuResult(menuID: menu.id, kind: kind, value: value, inputMethod: .dtmf)
        result = finished
        deadline = nil
        prompting = false
        return [.finished(finished)]
    }
}
