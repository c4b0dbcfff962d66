import BirthdayBuzz
import CurlSupport
import Foundation

/// What a pass tells the `[health]` monitor: healthy or not, and one line.
struct HealthOutcome: Sendable, Equatable {
    var healthy: Bool
    var summary: String
}

extension DispatchReport {
    /// The counts as one line: `tick: 3 due, 2 sent, 1 failed, 0 retrying, 0 missed, 0 skipped`.
    func countsLine(_ prefix: String) -> String {
        "\(prefix): \(due) due, \(sent) sent, \(failed) failed, \(retrying) retrying, \(missed) missed, \(skipped) skipped"
            + (problems > 0 ? ", \(problems) not delivered anywhere" : "")
            + (noticesPending > 0 ? " (\(noticesPending) not announced yet)" : "")
    }

    /// Healthy: the pass found no reminder that reached nobody (a problem) and
    /// left no notice undelivered. A reminder still retrying is not a problem
    /// yet (its channel or a fallback may still deliver it).
    func healthOutcome(_ prefix: String) -> HealthOutcome {
        HealthOutcome(healthy: problems == 0 && noticesPending == 0, summary: countsLine(prefix))
    }
}

/// Sends `[health]` pings: a GET of `ping_url` after a healthy pass, else a
/// POST of the summary to the failure URL. A ping is tried once, with a short
/// timeout; what goes wrong is returned as one line for the caller to log
/// (never a change of exit status). URLs are secrets: lines show scheme and host.
struct HealthPinger: Sendable {
    let health: BuzzConfig.Health
    let environment: [String: String]
    private let session = CurlSession(label: "health")
    /// Seconds a ping may take, connection included.
    static let timeout: Double = 10

    /// nil without a `[health]` table.
    init?(config: BuzzConfig, environment: [String: String]) {
        guard let health = config.health else { return nil }
        self.health = health
        self.environment = environment
    }

    var pingEvery: Int { health.pingEvery }

    /// Sends one ping; nil when the monitor took it, else the warning line.
    func ping(_ outcome: HealthOutcome) async -> String? {
        let pingURL: String
        switch health.ping {
        case .url(let url): pingURL = url
        case .environment(let variable):
            guard let value = environment[variable], !value.isEmpty else {
                return "health ping not sent: ping_url_env names \(variable), which is not set"
            }
            guard value.hasPrefix("https://") || value.hasPrefix("http://") else {
                return "health ping not sent: \(variable) does not hold an http(s) URL"
            }
            pingURL = value
        }
        let request: HTTPRequest
        if outcome.healthy {
            request = HTTPRequest(url: HealthPingURLs.substituting(pingURL, summary: outcome.summary), method: "GET",
                                  timeout: Self.timeout, responseLimit: 4_096)
        } else {
            guard let failURL = HealthPingURLs.failURL(pingURL: pingURL, failURL: health.failURL) else {
                return "health failure ping not sent: the ping URL has a query, so [health] needs fail_url"
            }
            request = HTTPRequest(url: HealthPingURLs.substituting(failURL, summary: outcome.summary), method: "POST",
                                  headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
                                  body: Array(outcome.summary.utf8), timeout: Self.timeout, responseLimit: 4_096)
        }
        let shown = SecretScrubber.displayURL(request.url)
        do {
            let response = try await session.http(request)
            guard (200..<300).contains(response.status) else {
                return "health ping to \(shown) answered HTTP \(response.status)"
            }
            return nil
        } catch {
            return "health ping to \(shown) failed: \(Self.hidingURLs("\(error)", in: request.url))"
        }
    }

    /// What `doctor` says of `[health]`: where pings go, as scheme and host.
    var doctorLine: (ok: Bool, text: String) {
        let pingURL: String
        switch health.ping {
        case .url(let url): pingURL = url
        case .environment(let variable):
            guard let value = environment[variable], !value.isEmpty else {
                return (false, "health: ping_url_env names \(variable), which is not set; no pings are sent")
            }
            pingURL = value
        }
        let failURL = HealthPingURLs.failURL(pingURL: pingURL, failURL: health.failURL)
        return (true, "health: pings \(SecretScrubber.displayURL(pingURL)) after each pass, failures to "
                + "\(failURL.map(SecretScrubber.displayURL) ?? "(no fail_url)"), every \(ValueFormats.durationText(health.pingEvery)) from an idle daemon")
    }

    /// libcurl's messages may quote the URL: only its scheme and host are shown.
    static func hidingURLs(_ text: String, in url: String) -> String {
        let scrubber = SecretScrubber()
        scrubber.register(url)
        if let components = URLComponents(string: url) {
            if components.path.count > 1 { scrubber.register(components.path) }
            if let query = components.query, !query.isEmpty { scrubber.register(query) }
        }
        return scrubber.scrub(text)
    }
}
