import ParleyCallCore
import Testing

/// `NumberRoute` (a `--sip-number` rule) and `NumberRouteTable`: parsing with its errors,
/// numbers with and without `+`, lookups.
@Suite struct NumberRouteTests {
    @Test func parsesTheThreeForms() throws {
        #expect(try NumberRoute(parsing: "+46812345678=app-1:user:alice")
                == NumberRoute(number: "+46812345678", applicationKey: "app-1", target: .user("alice")))
        #expect(try NumberRoute(parsing: "46812345678=app_1:conference:sales=room")
                == NumberRoute(number: "+46812345678", applicationKey: "app_1", target: .conference("sales=room")))
        #expect(try NumberRoute(parsing: "15550101=K") == NumberRoute(number: "+15550101", applicationKey: "K", target: .backend))
    }

    @Test func printsTheRuleInE164() throws {
        for (given, printed) in [("46812345678=k:user:bob", "+46812345678=k:user:bob"), ("+4790=k", "+4790=k"),
                                 ("4790=k:conference:r", "+4790=k:conference:r")] {
            let route = try NumberRoute(parsing: given)
            #expect(route.description == printed)
            #expect(try NumberRoute(parsing: route.description) == route)
        }
    }

    @Test(arguments: [
        ("", #""" is not NUMBER=KEY, NUMBER=KEY:user:ID, NUMBER=KEY:conference:ID, NUMBER=KEY:number:NUMBER or NUMBER=KEY:sip:ADDRESS"#),
        ("+46812345678", #""+46812345678" is not NUMBER=KEY, NUMBER=KEY:user:ID, NUMBER=KEY:conference:ID, NUMBER=KEY:number:NUMBER or NUMBER=KEY:sip:ADDRESS"#),
        ("=k", #""=k" has "", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +"#),
        ("+0812=k", #""+0812=k" has "+0812", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +"#),
        ("+4=k", #""+4=k" has "+4", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +"#),
        ("+1234567890123456=k", #""+1234567890123456=k" has "+1234567890123456", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +"#),
        ("+46 8123=k", #""+46 8123=k" has "+46 8123", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +"#),
        ("++4681=k", #""++4681=k" has "++4681", which is not a phone number: 2 to 15 digits, the first not 0, with or without a leading +"#),
        ("+4681=", #""+4681=" has application key "", which is not 1-64 bytes of A-Z a-z 0-9 - _"#),
        ("+4681=k=v", #""+4681=k=v" has application key "k=v", which is not 1-64 bytes of A-Z a-z 0-9 - _"#),
        ("+4681=k:user", #""+4681=k:user" does not end in KEY, KEY:user:ID, KEY:conference:ID, KEY:number:NUMBER or KEY:sip:ADDRESS"#),
        ("+4681=k:user:", #""+4681=k:user:" has user id "", which is not 1-255 bytes of A-Z a-z 0-9 - _ ="#),
        ("+4681=k:user:a:b", #""+4681=k:user:a:b" has user id "a:b", which is not 1-255 bytes of A-Z a-z 0-9 - _ ="#),
        ("+4681=k:user:al ice", #""+4681=k:user:al ice" has user id "al ice", which is not 1-255 bytes of A-Z a-z 0-9 - _ ="#),
        ("+4681=k:room:r", #""+4681=k:room:r" does not end in KEY, KEY:user:ID, KEY:conference:ID, KEY:number:NUMBER or KEY:sip:ADDRESS"#),
        ("+4681=k:User:r", #""+4681=k:User:r" does not end in KEY, KEY:user:ID, KEY:conference:ID, KEY:number:NUMBER or KEY:sip:ADDRESS"#),
        ("+4681=k:conference:", #""+4681=k:conference:" has conference id "", which is not 1-64 bytes of A-Z a-z 0-9 - _ ="#),
        ("+4681=k:user:a\u{1}", "\"+4681=k:user:a?\" has user id \"a?\", which is not 1-255 bytes of A-Z a-z 0-9 - _ ="),
    ])
    func refusesBadRulesClearly(_ rule: String, _ message: String) {
        let error = #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: rule) }
        #expect(error?.description == message)
    }

    @Test func boundsEveryPart() throws {
        let key = String(repeating: "k", count: 64)
        let user = String(repeating: "u", count: 255)
        let room = String(repeating: "r", count: 64)
        #expect(try NumberRoute(parsing: "+123456789012345=\(key):user:\(user)").target == .user(user))
        #expect(try NumberRoute(parsing: "+123456789012345=\(key):conference:\(room)").target == .conference(room))
        #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: "+4681=\(key)k") }
        #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: "+4681=k:user:\(user)u") }
        #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: "+4681=k:conference:\(room)r") }
        // A huge rule is refused before it is split, and its message stays short.
        let huge = "+4681=k:user:" + String(repeating: "x", count: 1 << 20)
        let error = #expect(throws: NumberRoute.ParseError.self) { try NumberRoute(parsing: huge) }
        #expect(error?.description.hasSuffix("is longer than 512 bytes") == true)
        #expect((error?.description.utf8.count ?? .max) < 200)
    }

    @Test func normalisesNumbersToE164() {
        #expect(NumberRoute.e164("+46812345678") == "+46812345678")
        #expect(NumberRoute.e164("46812345678") == "+46812345678")
        #expect(NumberRoute.e164("12") == "+12")
        #expect(NumberRoute.e164("1") == nil)
        #expect(NumberRoute.e164("0046812345678") == nil)
        #expect(NumberRoute.e164("+") == nil)
        #expect(NumberRoute.e164("") == nil)
        #expect(NumberRoute.e164("+46-8123") == nil)
        #expect(NumberRoute.e164("٤٦٨١") == nil, "only ASCII digits")
    }

    @Test func theTableLooksNumbersUpWithOrWithoutPlus() throws {
        let routes = try ["+46812345678=shop:user:alice", "4790000000=shop:conference:standup", "+15550101=crm"]
            .map { (text: String) throws(NumberRoute.ParseError) in try NumberRoute(parsing: text) }
        let table = try NumberRouteTable(routes)
        #expect(!table.isEmpty)
        #expect(table.routes == routes)
        #expect(table.route(for: "+46812345678")?.target == .user("alice"))
        #expect(table.route(for: "46812345678")?.target == .user("alice"))
        #expect(table.route(for: "+4790000000")?.target == .conference("standup"))
        #expect(table.route(for: "15550101")?.applicationKey == "crm")
        #expect(table.route(for: "15550101")?.target == .backend)
        #expect(table.route(for: "+46812345679") == nil)
        #expect(table.route(for: "not a number") == nil)
        #expect(table.routes(ofApplication: "shop").map(\.number) == ["+46812345678", "+4790000000"])
        #expect(table.routes(ofApplication: "none").isEmpty)
        #expect(NumberRouteTable().isEmpty)
        #expect(NumberRouteTable().route(for: "+46812345678") == nil)
    }

    @Test func aNumberHasOneRule() throws {
        // The same number once with and once without its +.
        let routes = try ["+46812345678=a:user:alice", "46812345678=b"]
            .map { (text: String) throws(NumberRoute.ParseError) in try NumberRoute(parsing: text) }
        let error = #expect(throws: NumberRouteTable.DuplicateNumber.self) { try NumberRouteTable(routes) }
        #expect(error?.description == "+46812345678 has more than one rule")
    }

    @Test func tablesCompareByTheirRules() throws {
        let one = try NumberRouteTable([NumberRoute(parsing: "+4681=k")])
        let same = try NumberRouteTable([NumberRoute(parsing: "4681=k")])
        let other = try NumberRouteTable([NumberRoute(parsing: "4681=k:user:u")])
        #expect(one == same)
        #expect(one.hashValue == same.hashValue)
        #expect(one != other)
        #expect(one != NumberRouteTable())
    }
}
