import ArgumentParser
import BirthdayBuzz
import BuzzFiles
import BuzzStore
import Foundation

struct TriageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "triage",
        abstract: "Go through undecided contacts: include, skip, enter a birthday, ask for it, or quit.",
        discussion: "Each answer is saved at once, so quitting keeps what you decided. Reads one line per answer.")

    @ParentCommand var root: Buzz

    func run() async throws {
        let context = try Context(root.global)
        let store = try context.openStore()
        // Asking needs the templates; a broken one only disables [a]sk.
        let flow = (try? MessageTemplates(overrideDirectories: context.templateDirectories)).map {
            AskFlow(context: context, store: store, templates: $0, wiring: ChannelWiring(context: context))
        }
        let undecided = try runtime { try store.allContacts() }.filter { $0.decision == nil }
            .sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
        guard !undecided.isEmpty else {
            print("Nothing to triage: every contact is included or skipped.")
            return
        }
        var included = 0, skipped = 0
        var index = 0
        contacts: while index < undecided.count {
            let contact = undecided[index]
            let birthday = contact.birthday.map { "birthday \($0)" }
                ?? contact.card.birthdayText.map { "no birthday (note: \($0))" } ?? "no birthday"
            print("[\(index + 1)/\(undecided.count)] \(contact.name) — \(birthday)")
            while true {
                let askOption = contact.birthday == nil && flow != nil ? "  [a]sk" : ""
                let choices = askOption.isEmpty ? "i, s, b, n or q" : "i, s, b, a, n or q"
                print("  [i]nclude  [s]kip  [b]irthday\(askOption)  [n]ext  [q]uit > ", terminator: "")
                fflush(nil)
                guard let line = readLine() else { break contacts }
                switch line.trimmingCharacters(in: .whitespaces).lowercased() {
                case "i", "include":
                    try runtime { try store.setDecision(.include, for: [contact.id], now: context.now) }
                    included += 1
                case "s", "skip":
                    try runtime { try store.setDecision(.skip, for: [contact.id], now: context.now) }
                    skipped += 1
                case "b", "birthday":
                    // Asked again until it is a date; an empty answer goes back to the menu.
                    var date: Birthday?
                    while date == nil {
                        print("  birthday (MM-DD, --MM-DD or YYYY-MM-DD; empty: back) ", terminator: "")
                        fflush(nil)
                        guard let entered = readLine()?.trimmingCharacters(in: .whitespaces) else { break contacts }
                        if entered.isEmpty { break }
                        do {
                            date = try enteredBirthday(entered, today: context.today)
                        } catch let error as CLIError {
                            print("  \(error.message); try again.")
                        }
                    }
                    guard let date else { continue }
                    try runtime { try store.setManualBirthday(date, for: contact.id, now: context.now) }
                    print("  birthday set to \(date); included")
                    if let note = oldYearNote(date, today: context.today) { print("  note: " + note) }
                    included += 1
                case "a", "ask":
                    guard let flow, contact.birthday == nil else {
                        print("  answer \(choices)")
                        continue
                    }
                    do {
                        try await flow.ask(contact)
                    } catch let error as CLIError {
                        print("  " + error.message)
                    }
                    continue
                case "n", "next", "":
                    break
                case "q", "quit":
                    break contacts
                default:
                    print("  answer \(choices)")
                    continue
                }
                break
            }
            index += 1
        }
        print("triage: \(included) included, \(skipped) skipped, \(undecided.count - index) left undecided")
    }
}
