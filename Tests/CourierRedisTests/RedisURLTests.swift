import CourierRedis
import Testing

@Suite struct RedisURLTests {
    @Test func theDefaults() throws {
        let url = try RedisURL("redis://127.0.0.1")
        #expect(url == RedisURL(host: "127.0.0.1", port: 6379, usesTLS: false, username: nil, password: nil, database: 0))
        #expect(url.endpoint == "127.0.0.1:6379")
    }

    @Test func everyPart() throws {
        let url = try RedisURL("rediss://courier:p%40ss%3Aword@redis.example.com:6380/3")
        #expect(url.usesTLS)
        #expect(url.host == "redis.example.com")
        #expect(url.port == 6380)
        #expect(url.username == "courier")
        #expect(url.password == "p@ss:word")
        #expect(url.database == 3)
        #expect(url.description == "rediss://courier:***@redis.example.com:6380/3", "the password is never shown")
    }

    @Test func aPasswordAloneAndIPv6() throws {
        let url = try RedisURL("redis://:secret@[::1]:7000/0")
        #expect(url.username == nil)
        #expect(url.password == "secret")
        #expect(url.host == "::1")
        #expect(url.endpoint == "[::1]:7000")
        #expect(try RedisURL("redis://[::1]").port == 6379)
    }

    @Test(arguments: [
        "http://127.0.0.1", "redis://", "redis://host:0", "redis://host:65536", "redis://host:x", "redis://host/-1",
        "redis://host/db", "redis://user@host", "redis://host?db=1", "redis://[::1", "redis://[::1]x", "redis://[host]", "redis://[1:2:3]:6379", "redis://:%zz@host",
    ])
    func refused(text: String) {
        #expect(throws: RedisError.self) { try RedisURL(text) }
    }

    @Test func anErrorHidesTheCredentials() {
        let error = #expect(throws: RedisError.self) { try RedisURL("redis://u:hunter2@host:99999") }
        #expect(error?.kind == .configuration)
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.message.contains("redis://***@host:99999") == true)
    }

    @Test func aScriptIsNamedByTheSHA1OfItsSource() {
        #expect(RedisScript("return 1").sha1 == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
    }
}
