#!/usr/bin/env bash
# Installs what building and testing BirthdayBuzz needs on Debian, when missing.
# Usage: scripts/deps.sh [build|test]
set -euo pipefail
mode=${1:-build}
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

packages=(libsqlite3-dev libcurl4-openssl-dev libdbus-1-dev pkg-config)
if [ "$mode" = test ]; then
  # python3-radicale: the CardDAV server BuzzCardDAVTests start (Radicale 3.1 on Debian 12).
  # python3-icalendar, python3-recurring-ical-events: read back `buzz export ics` (ExportCLITests);
  # desktop-file-utils, man-db: check what scripts/install.sh installs (InstallScriptTests).
  # dbus-bin: dbus-send and dbus-monitor (NotificationListenerTests reads who called Notify).
  # dunst, xvfb: a real notification server on its own display (EscalationTests: dunstctl close).
  # calendar: Debian's name-day calendars (NameDayTests reads hu_HU/calendar.nevnapok as it is).
  # apprise: Debian's Apprise (CLI and python3 library), the oracle for Apprise URLs (AppriseOracleTests).
  packages+=(dbus-daemon dbus-bin python3-dbusmock python3-aiosmtpd openssl python3-radicale python3-icalendar python3-recurring-ical-events desktop-file-utils man-db dunst xvfb calendar apprise)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq >&2
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
if ! command -v swift >/dev/null 2>&1; then
  echo "swift is not on PATH: install Swift 6.x (https://swift.org/install) first" >&2
  exit 1
fi
