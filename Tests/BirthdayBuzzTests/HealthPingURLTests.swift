import Foundation
import Testing
@testable import BirthdayBuzz

/// `[health]`: the failure URL's default, `{summary}` encoding, and the config rules.
@Suite struct HealthPingURLTests {
    @Test func failURLAppendsFailWithoutDoublingASlash() {
        #expect(HealthPingURLs.failURL(pingURL: "https://hc-ping.com/abc", failURL: nil) == "https://hc-ping.com/abc/fail")
        #expect(HealthPingURLs.failURL(pingURL: "https://hc-ping.com/abc/", failURL: nil) == "https://hc-ping.com/abc/fail")
        #expect(HealthPingURLs.failURL(pingURL: "https://kuma/api/push/T?status=up", failURL: nil) == nil)
        #expect(HealthPingURLs.failURL(pingURL: "https://kuma/api/push/T?status=up", failURL: "https://kuma/x")
                == "https://kuma/x")
    }

    @Test func summaryIsPercentEncodedWherePlaceholdersAre() {
        let url = HealthPingURLs.substituting("https://kuma/api/push/T?status=down&msg={summary}",
                                              summary: "tick: 1 due, 0 sent & more/ü")
        #expect(url == "https://kuma/api/push/T?status=down&msg=tick%3A%201%20due%2C%200%20sent%20%26%20more%2F%C3%BC")
        #expect(HealthPingURLs.substituting("https://hc/abc", summary: "x y") == "https://hc/abc")
    }

    @Test func healthTableIsRead() throws {
        #expect(try ConfigTests.load("").health == nil)
        let config = try ConfigTests.load("[health]\nping_url = \"https://hc-ping.com/abc\"\n")
        #expect(config.health?.ping == .url("https://hc-ping.com/abc"))
        #expect(config.health?.pingEvery == 3_600)
        #expect(config.health?.failURL == nil)
        let kuma = try ConfigTests.load("""
            [health]
            ping_url_env = "KUMA"
            fail_url = "https://kuma/api/push/T?status=down&msg={summary}"
            ping_every = "15m"
            """)
        #expect(kuma.health?.ping == .environment("KUMA"))
        #expect(kuma.health?.pingEvery == 900)
    }

    @Test func aQueryWithoutFailURLIsAnErrorThatHidesTheURL() throws {
        let error = try #require(ConfigTests.error("[health]\nping_url = \"https://kuma/api/push/SECRET?status=up\"\n"))
        #expect(error.description.contains("[health]"), "\(error)")
        #expect(!error.description.contains("SECRET"), "\(error)")
        #expect(!error.description.contains("\n"))
        #expect(ConfigTests.error("[health]\nfail_url = \"https://x/y\"\n")?.description.contains("ping_url") == true)
        #expect(ConfigTests.error("[health]\nping_url = \"ftp://x/y\"\n") != nil)
        #expect(ConfigTests.error("[health]\nping_url = \"https://x/y\"\nping = 1\n")?.description.contains("unknown key") == true)
    }
}
