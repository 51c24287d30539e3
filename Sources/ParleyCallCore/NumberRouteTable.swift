/// The static number routing rules parleyd was started with (`--sip-number`, issue 12),
/// looked up by the number a call from a SIP trunk or peer was placed to. At most one rule
/// per number: a number belongs to one application.
public struct NumberRouteTable: Sendable, Hashable {
    /// Two rules for one number: which one wins would be a guess.
    public struct DuplicateNumber: Error, Sendable, Hashable, CustomStringConvertible {
        /// The number both rules name, E.164.
        public let number: String
        public var description: String { "\(number) has more than one rule" }
    }

    /// The rules in the order given.
    public private(set) var routes: [NumberRoute]
    private var byNumber: [String: Int]

    /// No rules: every number is unknown.
    public init() {
        routes = []
        byNumber = [:]
    }

    /// The table of `routes`.
    /// - Throws: `DuplicateNumber` when two rules name one number (with or without `+`,
    ///   the rules' numbers are E.164 already).
    public init(_ routes: [NumberRoute]) throws(DuplicateNumber) {
        self.init()
        for route in routes {
            guard byNumber[route.number] == nil else { throw DuplicateNumber(number: route.number) }
            byNumber[route.number] = self.routes.count
            self.routes.append(route)
        }
    }

    /// Whether there are no rules.
    public var isEmpty: Bool { routes.isEmpty }

    /// The rule for `number` (E.164, or its digits without `+`), or nil when none names it
    /// or it is not a phone number.
    public func route(for number: some StringProtocol) -> NumberRoute? {
        guard let normalized = NumberRoute.e164(number), let index = byNumber[normalized] else { return nil }
        return routes[index]
    }

    /// The rules of one application, in the order given.
    public func routes(ofApplication applicationKey: String) -> [NumberRoute] {
        routes.filter { $0.applicationKey == applicationKey }
    }

    public static func == (lhs: NumberRouteTable, rhs: NumberRouteTable) -> Bool { lhs.routes == rhs.routes }

    public func hash(into hasher: inout Hasher) { hasher.combine(routes) }
}
