// The text of config.example.toml, embedded so `buzz init` works from an installed
// binary. A test checks that it matches the file in the repository.
public enum ExampleConfig {
    public static let text = #"""
# BirthdayBuzz configuration — $XDG_CONFIG_HOME/birthdaybuzz/config.toml
#
# Every key is optional: what you leave out takes the default shown. Unknown
# keys, wrong types and bad times, zones or durations are errors, reported
# with the file, line and key path, before anything is sent.
# Durations are written like "30s", "90m", "12h", "1h30m" or "2d".

[general]
# IANA time zone for reminder times. Default: the system's.
# timezone = "Europe/Berlin"
# Language of reminders (BCP 47). Default: from $LC_ALL, $LC_MESSAGES or $LANG,
# e.g. de_AT.UTF-8 becomes "de-AT"; "en" when none is set.
# locale = "en"

[contacts]
# A newly imported contact with a birthday is buzzed (included) right away.
# Set to false to start every new contact undecided and go through `buzz triage`.
include_by_default = true

[reminders]
# Days before the birthday to remind you: 0 = on the day, 1 = the day before.
offsets = [0, 1]
# Local time of day the reminders fire (24-hour HH:MM, in general.timezone).
# A time that falls in a daylight-saving gap fires as RFC 5545 says
# (02:30 on a spring-forward night fires at 03:30).
time = "09:00"
# Where reminders go. Default: console, plus desktop notifications when a
# session bus is there. Names are [channels.NAME] tables below, or the
# built-in "console" and "desktop".
# channels = ["desktop", "mail"]
# Feb 29 birthdays in common years: "feb28" (default) or "mar1".
feb29 = "feb28"
# How many upcoming events are planned ahead (the look-ahead ceiling). It never
# limits what is due: every due reminder is delivered.
max_pending = 64
# A reminder up to this late (the machine was off or asleep) is still sent;
# older ones are recorded as missed instead of flooding you.
catch_up = "12h"

# Groups override offsets and channels for contacts whose vCard CATEGORIES
# contain the group's name (case-insensitive). When a contact is in several
# groups, the first group by name applies.
# [groups.family]
# offsets = [0, 1, 7]
# channels = ["desktop", "mail"]

[delivery]
# Attempts per reminder and channel before it is marked failed.
max_attempts = 8
# Longest wait between retries (a server's Retry-After may ask for longer and wins).
max_backoff = "6h"
# How long `buzz tick` waits for another running dispatcher before giving up (exit 0).
lock_wait = "30s"

[ask]
# Asking contacts without a birthday for it: routes in order of preference.
order = ["sms", "email", "share"]
# Channel that sends SMS (a webhook to an SMS gateway, or an exec plugin).
# sms = "sms-gateway"
# Channel that sends email asks (an smtp channel).
# email = "mail"
# "send" mails the ask through the email channel; "compose" opens it in your
# mail client (xdg-open mailto:…) for you to review and send.
email_mode = "send"
# Days before the same contact may be asked again (without --force).
cooldown_days = 30
# Your name as it appears in ask messages.
# sender_name = "Alex"

# ---------------------------------------------------------------------------
# Channels. Every channel has a type and an optional timeout (default "10s").
# Secrets are never written here: passwords and tokens come from the
# environment, a file, or a command.
# ---------------------------------------------------------------------------

# Desktop notifications (org.freedesktop.Notifications over D-Bus). A channel
# named "desktop" with the defaults exists without this table.
# [channels.desktop]
# type = "dbus"
# urgency = "normal"        # low | normal | critical
# expire_timeout = -1       # milliseconds; -1 = the server's default, 0 = never
# timeout = "10s"

# Email over SMTP.
# [channels.mail]
# type = "smtp"
# host = "smtp.example.org"
# port = 587                 # default: 587 for starttls, 465 for tls, 25 for none
# security = "starttls"      # starttls (default) | tls | none (loopback hosts only)
# username = "me@example.org"
# password_env = "BUZZ_SMTP_PASSWORD"           # or one of:
# password_file = "~/.config/birthdaybuzz/smtp-password"
# password_command = ["pass", "show", "mail/smtp"]   # argv, no shell; first line of output
# from = "BirthdayBuzz <me@example.org>"
# to = "me@example.org"      # a string or an array of addresses
# insecure = false           # true skips TLS certificate verification
# ca_file = "/etc/ssl/certs/my-ca.pem"

# Chat and push services through webhooks.
# [channels.chat]
# type = "webhook"
# preset = "generic"         # generic | slack | discord | mattermost | ntfy | matrix | gotify
# url_env = "BUZZ_CHAT_URL"  # or: url = "https://ntfy.sh/my-topic"
# method = "POST"            # POST | PUT | PATCH (matrix uses PUT)
# insecure = false
# [channels.chat.headers]
# Authorization = { env = "BUZZ_CHAT_TOKEN" }   # read from the environment
# X-Priority = "3"

# A webhook with your own Mustache body; values are escaped for content_type.
# [channels.custom]
# type = "webhook"
# url = "https://hooks.example.org/birthday"
# content_type = "application/json"
# body = '{"text": "{{title}}: {{body}}"}'

# An SMS gateway that takes a form-encoded POST (example shape; adapt the
# field names to your provider's API). The recipient's number is {{to}}.
# [channels.sms-gateway]
# type = "webhook"
# url = "https://sms.example.net/api/send"
# content_type = "application/x-www-form-urlencoded"
# body = "to={{to}}&message={{body}}"
# [channels.sms-gateway.headers]
# Authorization = { env = "BUZZ_SMS_TOKEN" }

# Any other service: a program, run without a shell, with the message as JSON
# on stdin. Exit 0 = delivered, 75 = try again later, anything else = failed.
# [channels.phone]
# type = "exec"
# command = ["/usr/local/bin/buzz-kdeconnect"]
# timeout = "30s"
# [channels.phone.env]
# DEVICE_ID = "0123456789abcdef"

# Print to standard output. A channel named "console" exists without this table.
# [channels.console]
# type = "console"
"""#
}
