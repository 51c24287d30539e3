import ParleyStore
import Testing

/// Applications and known users, on every store.
@Suite struct ApplicationTests {
    @Test(arguments: StoreFactory.all) func createListAndGet(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        #expect(try store.applications().isEmpty)
        let created = try store.createApplication(key: "k2", name: "second", secret: "czI=", at: T.at(5))
        try store.createApplication(key: "k1", name: "first", secret: "czE=", at: T.at(1))
        #expect(created == Application(key: "k2", name: "second", secret: "czI=", createdTime: T.at(5)))
        #expect(try store.applications().map(\.key) == ["k1", "k2"])
        #expect(try store.application(key: "k2") == created)
        #expect(try store.application(key: "nope") == nil)
    }

    @Test(arguments: StoreFactory.all) func duplicateKeyIsAlreadyExists(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        try store.createApplication(key: "k", name: "a", secret: "s", at: T.base)
        let error = #expect(throws: StoreError.self) { try store.createApplication(key: "k", name: "b", secret: "t", at: T.base) }
        #expect(error?.kind == .alreadyExists)
        #expect(error?.message == "application k already exists")
    }

    @Test(arguments: StoreFactory.all) func rotationKeepsThePreviousSecretForTheGracePeriod(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        try store.createApplication(key: "k", name: "a", secret: "old", at: T.base)
        let rotated = try store.rotateSecret(key: "k", newSecret: "new", at: T.at(1000), gracePeriodMilliseconds: 60_000)
        #expect(rotated.secret == "new")
        #expect(rotated.previousSecret == "old")
        #expect(rotated.previousSecretValidUntil == T.at(61_000))
        #expect(rotated.secretRotatedTime == T.at(1000))
        #expect(try store.application(key: "k") == rotated)
        #expect(rotated.validSecrets(at: T.at(60_999)) == ["new", "old"])
        #expect(rotated.validSecrets(at: T.at(61_000)) == ["new"])

        // A second rotation replaces the previous secret; no grace drops it at once.
        let again = try store.rotateSecret(key: "k", newSecret: "newer", at: T.at(2000), gracePeriodMilliseconds: 0)
        #expect(again.previousSecret == nil)
        #expect(again.previousSecretValidUntil == nil)
        #expect(again.validSecrets(at: T.at(2000)) == ["newer"])
        #expect(try store.application(key: "k") == again)
    }

    @Test(arguments: StoreFactory.all) func rotationRefusals(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        try store.createApplication(key: "k", name: "a", secret: "s", at: T.base)
        let unknown = #expect(throws: StoreError.self) { try store.rotateSecret(key: "x", newSecret: "t", at: T.base, gracePeriodMilliseconds: 0) }
        #expect(unknown?.kind == .notFound)
        let same = #expect(throws: StoreError.self) { try store.rotateSecret(key: "k", newSecret: "s", at: T.base, gracePeriodMilliseconds: 0) }
        #expect(same?.kind == .invalidArgument)
        let negative = #expect(throws: StoreError.self) { try store.rotateSecret(key: "k", newSecret: "t", at: T.base, gracePeriodMilliseconds: -1) }
        #expect(negative?.kind == .invalidArgument)
        #expect(try store.application(key: "k")?.secret == "s")
    }

    @Test(arguments: StoreFactory.all) func usersBecomeKnownPerApplicationWhenFirstSeen(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        try store.createApplication(key: "a1", name: "one", secret: "s", at: T.base)
        try store.createApplication(key: "a2", name: "two", secret: "s", at: T.base)
        #expect(try !store.isKnownUser(applicationKey: "a1", userId: "alice"))
        let first = try store.recordUserSeen(applicationKey: "a1", userId: "alice", at: T.at(100))
        #expect(first == KnownUser(applicationKey: "a1", userId: "alice", firstSeenTime: T.at(100), lastSeenTime: T.at(100)))
        try store.recordUserSeen(applicationKey: "a1", userId: "alice", at: T.at(500))
        // An out-of-order earlier report does not move lastSeen back.
        let later = try store.recordUserSeen(applicationKey: "a1", userId: "alice", at: T.at(300))
        #expect(later.firstSeenTime == T.at(100))
        #expect(later.lastSeenTime == T.at(500))
        #expect(try store.isKnownUser(applicationKey: "a1", userId: "alice"))
        #expect(try !store.isKnownUser(applicationKey: "a2", userId: "alice"))
        #expect(try store.knownUser(applicationKey: "a1", userId: "alice") == later)

        let unknownApp = #expect(throws: StoreError.self) { try store.recordUserSeen(applicationKey: "zz", userId: "alice", at: T.base) }
        #expect(unknownApp?.kind == .notFound)
    }
    @Test(arguments: StoreFactory.all) func knownUsersListsEveryUserSeenPerApplication(_ factory: StoreFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let store = try fixture.open()
        try store.createApplication(key: "a1", name: "one", secret: "s", at: T.base)
        try store.createApplication(key: "a2", name: "two", secret: "s", at: T.base)
        #expect(try store.knownUsers().isEmpty)
        try store.recordUserSeen(applicationKey: "a2", userId: "carol", at: T.at(1))
        try store.recordUserSeen(applicationKey: "a1", userId: "bob", at: T.at(2))
        try store.recordUserSeen(applicationKey: "a1", userId: "alice", at: T.at(3))
        try store.recordUserSeen(applicationKey: "a1", userId: "alice", at: T.at(9))
        let all = try store.knownUsers()
        #expect(all.map { "\($0.applicationKey)/\($0.userId)" } == ["a1/alice", "a1/bob", "a2/carol"])
        #expect(all[0] == KnownUser(applicationKey: "a1", userId: "alice", firstSeenTime: T.at(3), lastSeenTime: T.at(9)))
        #expect(try store.knownUsers(applicationKey: "a2").map(\.userId) == ["carol"])
        #expect(try store.knownUsers(applicationKey: "zz").isEmpty)
    }
}
