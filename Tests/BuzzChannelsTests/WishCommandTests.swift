import BuzzTestKit
import Foundation
import Testing

/// `buzz wish` (docs/design/asks-and-wishes.md) as a user runs it, against the real SMTP server.
@Suite(.timeLimit(.minutes(2))) struct WishCommandTests {
    @Test(.enabled(if: ServerGate.allows(.smtp), "needs python3-aiosmtpd"))
    func dryRunThenOneMailThenForce() async throws {
        let sink = SMTPSink()
        let port = try await sink.start()
        let sandbox = try AskCommandTests.world(smtpPort: port)
        try await AskCommandTests.importCards(sandbox, [
            VCard.card(uid: "ana", name: "Ana Lima", bday: "1990-03-15", emails: ["ana@example.org"], phones: ["+49 170 1234567"]),
            VCard.card(uid: "jw", name: "Jürgen Weiß", bday: "--03-10", emails: ["jw@example.de"], extra: ["LANG:de-AT"]),
            VCard.card(uid: "nb", name: "No Birthday", emails: ["nb@example.org"]),
        ])
        let now = "2027-03-15T10:00"
        // Phone and email, no sms channel: the dry run shows the email route and the text.
        let dry = try await sandbox.run(["wish", "Ana", "--dry-run", "--now", now])
        #expect(dry.status == 0, "\(dry)")
        #expect(dry.stdout.contains("Ana Lima: birthday 2027-03-15 (today), turning 37"), "\(dry)")
        #expect(dry.stdout.contains("by email to ana@example.org via channel mail [en]"), "\(dry)")
        #expect(dry.stdout.contains("Happy birthday, Ana! 37 looks good on you."), "\(dry)")
        #expect(dry.stdout.contains("Alex"), "\(dry)")
        #expect(try sink.messages().isEmpty)

        let sent = try await sandbox.run(["wish", "Ana", "--now", now])
        #expect(sent.status == 0, "\(sent)")
        let mail = try #require(try await sink.waitForMessages(count: 1).first)
        #expect(mail.rcptTos == ["ana@example.org"])
        let list = try await sandbox.run(["list", "--now", now])
        #expect(list.stdout.contains("Ana Lima (turning 37)  (wished today)"), "\(list)")
        let row = try await sandbox.jsonRows(["list", "--json", "--now", now]).first { $0["contact_id"] == .string("ana") }
        #expect(row?["wished_today"] == .bool(true))

        // The same birthday again needs --force, also the next day.
        let again = try await sandbox.run(["wish", "Ana", "--now", "2027-03-16T08:00"])
        #expect(again.status == 2 && again.stderrLines.count == 1 && again.stderr.contains("--force"), "\(again)")
        let dryAgain = try await sandbox.run(["wish", "Ana", "--dry-run", "--now", now])
        #expect(dryAgain.status == 0 && dryAgain.stdout.contains("was wished on 2027-03-15 by mail"), "\(dryAgain)")
        #expect(try sink.messages().count == 1)
        let forced = try await sandbox.run(["wish", "Ana", "--force", "--now", now])
        #expect(forced.status == 0, "\(forced)")
        #expect(try await sink.waitForMessages(count: 2).count == 2)
        let outbox = try await sandbox.run(["outbox", "--json"])
        #expect(outbox.stdout.contains("ana/wish/2027-03-15"), "\(outbox)")

        // Belated, in German for LANG:de-AT, without the age (no year).
        let belated = try await sandbox.run(["wish", "Jürgen", "--now", now])
        #expect(belated.status == 0, "\(belated)")
        let messages = try await sink.waitForMessages(count: 3)
        let body = try #require(messages.last?.body.replacingOccurrences(of: "\r\n", with: ""))
        let text = String(data: Data(base64Encoded: body) ?? Data(), encoding: .utf8) ?? body
        #expect(text.contains("Alles Liebe zum Geburtstag, Jürgen!") && !text.contains("steht dir gut"), "\(text)")
        #expect(try await sandbox.run(["outbox", "--json"]).stdout.contains("jw/wish/2027-03-10"))

        // No birthday: nothing to wish for (status 2, one line).
        let none = try await sandbox.run(["wish", "No Birthday", "--now", now])
        #expect(none.status == 2 && none.stderrLines.count == 1, "\(none)")
    }

    /// A wish the gateway cannot take now (HTTP 503) goes the reminders' way: the
    /// row waits `retrying` with a next attempt (not `failed`), the command says
    /// it will be retried and exits 1, and the next tick sends it. An ask that
    /// fails the same way stays `failed`: nothing sends an ask again by itself.
    @Test(.enabled(if: ServerGate.allows(.http), "needs python3 for the HTTP sink"))
    func aTemporaryFailureIsRetriedByTheNextTick() async throws {
        let sink = HTTPSink()
        let base = try await sink.start()
        try await sink.script([["status": 503], ["status": 503]], default: ["status": 200])
        let sandbox = try AskCommandTests.world(smsURL: base)
        try await AskCommandTests.importCards(sandbox, [
            VCard.card(uid: "ana", name: "Ana Lima", bday: "1990-03-15", extra: ["TEL;TYPE=CELL:+49 170 1234567"]),
            VCard.card(uid: "ben", name: "Ben Berg", extra: ["TEL;TYPE=CELL:+49 170 7654321"]),
        ])
        let wish = try await sandbox.run(["wish", "Ana", "--now", "2027-03-15T10:00"])
        #expect(wish.status == 1, "\(wish)")
        #expect(wish.stderr.contains("Ana Lima: wish not sent yet") && wish.stderr.contains("will be retried"), "\(wish)")
        let waiting = try await sandbox.jsonRows(["outbox", "--json"]).first { $0["id"] == .string("ana/wish/2027-03-15") }
        #expect(waiting?["status"] == .string("retrying"), "\(String(describing: waiting))")

        let ask = try await sandbox.run(["ask", "Ben", "--now", "2027-03-15T10:01"])
        #expect(ask.status == 1 && ask.stderr.contains("ask not sent"), "\(ask)")

        let tick = try await sandbox.run(["tick", "--now", "2027-03-15T11:00"])
        #expect(tick.status == 0, "\(tick)")
        let requests = try await sink.requests()
        #expect(requests.count == 3, "the wish, the ask, the wish again")
        #expect(requests.last?.bodyText?.contains("Happy+birthday") == true, "\(requests.last?.bodyText ?? "")")
        let rows = try await sandbox.jsonRows(["outbox", "--json"])
        #expect(rows.first { $0["id"] == .string("ana/wish/2027-03-15") }?["status"] == .string("sent"), "\(rows)")
        let askRow = rows.first { row in
            if case .string(let id) = row["id"] { return id.hasPrefix("ben/ask/") }
            return false
        }
        #expect(askRow?["status"] == .string("failed"), "\(rows)")
    }

    @Test func shareIsRecordedOncePerBirthdayAndNextBirthdayWhenNotRecent() async throws {
        let sandbox = try AskCommandTests.world()
        try await AskCommandTests.importCards(sandbox, [
            VCard.card(uid: "bo", name: "Bo Berg", bday: "--06-01", phones: ["+1 555 0100 22"]),
        ])
        let dry = try await sandbox.run(["wish", "Bo", "--dry-run", "--now", "2027-05-20"])
        #expect(dry.stdout.contains("birthday 2027-06-01 (in 12 days)") && dry.stdout.contains("by share"), "\(dry)")
        let shared = try await sandbox.run(["wish", "Bo", "--now", "2027-06-03"])
        #expect(shared.status == 0 && shared.stdout.contains("Share this with Bo Berg"), "\(shared)")
        #expect(shared.stdout.contains("sms:+1555010022?body="), "\(shared)")
        let again = try await sandbox.run(["wish", "Bo", "--now", "2027-06-04"])
        #expect(again.status == 2 && again.stderr.contains("by share for the birthday of 2027-06-01"), "\(again)")
        // Eight days after: the next birthday.
        let next = try await sandbox.run(["wish", "Bo", "--dry-run", "--now", "2027-06-09"])
        #expect(next.stdout.contains("birthday 2028-06-01"), "\(next)")
    }
}
