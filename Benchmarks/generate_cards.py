#!/usr/bin/env python3
"""Generate a deterministic vCard corpus and an equivalent `remind` file.

Usage: generate_cards.py [N] [OUT.vcf] [OUT.rem]

  N        number of vCards (default 100000)
  OUT.vcf  vCard output (default cards.vcf)
  OUT.rem  remind(1) output: one REM line per card that has a usable birthday
           (default cards.rem)

Python 3 standard library only; the output is byte-for-byte identical for the
same N (fixed seed).  With the default N the .vcf is about 28 MB
(~280 bytes/card on average).

What the corpus contains (all lines end in CRLF):
  * vCard versions: ~55% 3.0, ~40% 4.0, ~5% 2.1 (2.1 cards carry a
    QUOTED-PRINTABLE, CHARSET=UTF-8 FN and bare 2.1-style TEL type params).
  * UID on ~85% of cards (4.0: urn:uuid:..., 3.0/2.1: plain UUID).
  * BDAY forms: 1990-03-15, 19900315, --0315, --03-15, 1990-03-15T00:00:00Z,
    BDAY;X-APPLE-OMIT-YEAR=1604:1604-03-15, a few Feb 29 (--0229, 1992-02-29),
    ~10% no BDAY, ~1% BDAY;VALUE=text:circa 1980.
  * With BENCH_ANNIVERSARIES=F, that fraction of cards also has an
    anniversary (ANNIVERSARY, X-ANNIVERSARY or Apple's item9.X-ABDATE
    labelled _$!<Anniversary>!$_); with BENCH_DATES=F, that fraction has a
    labelled date (item8.X-ABDATE:YYYY-MM-DD with item8.X-ABLabel:Graduation,
    First met, ..., or Apple's _$!<Other>!$_).  Both default to 0, and each
    comes from a random stream of its own, so the rest of the cards is the
    same with or without them.
  * Size variety: N, several TEL/EMAIL, ADR (some Apple "itemN." groups),
    CATEGORIES, ORG, and NOTEs, some long enough to be folded (75 octets,
    CRLF + space continuation, never splitting a UTF-8 sequence).

The .rem file holds, for each card with a month/day birthday,
    REM 15 Mar +1 MSG Birthday: <FN>
i.e. a year-less yearly reminder with a one-day advance warning.  Names are
generated from fixed lists, but '%' and '[' are escaped anyway.
"""

import os
import random
import sys
import uuid

SEED = 20240315

FIRST = [
    "Anna", "Ben", "Carla", "David", "Eva", "Felix", "Greta", "Hugo", "Ines",
    "Jonas", "Klara", "Lukas", "Mia", "Noah", "Olga", "Paul", "Quentin",
    "Rosa", "Sven", "Tina", "Ulrich", "Vera", "Walter", "Xenia", "Yusuf",
    "Zoe", "Amélie", "Björn", "Céline", "Dörte", "Émile", "François",
    "Jürgen", "Łukasz", "Søren", "Zoë", "José", "María", "Nuño", "Åsa",
    "Chloé", "Renée", "Siobhán", "Mary-Jane", "Jean-Luc", "O'Neil",
    "Hiroshi", "Yuki", "Wei", "Priya", "Arjun", "Fatima", "Omar", "Leila",
    "Dmitri", "Anastasia", "Kofi", "Amara", "Mateo", "Valentina",
]
LAST = [
    "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner",
    "Becker", "Schulz", "Hoffmann", "Smith", "Johnson", "Williams", "Brown",
    "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez", "O'Brien",
    "McDonald", "van der Berg", "de la Cruz", "Nguyen", "Kim", "Tanaka",
    "Suzuki", "Singh", "Patel", "Kowalski", "Nowak", "Ivanova", "Petrov",
    "Jensen", "Hansen", "Lindqvist", "Østergaard", "Ångström", "Dubois",
    "Lefèvre", "Rossi", "Bianchi", "Ferreira", "Gonçalves", "Öztürk",
    "Papadopoulos", "Horváth", "Dvořák", "Mensah", "Okafor", "Haddad",
]
MIDDLE = ["A.", "B.", "J.", "M.", "R.", "Lee", "Marie", "Ann", "Louis"]
PREFIX = ["Dr.", "Prof.", "Mr.", "Ms."]
SUFFIX = ["Jr.", "Sr.", "III", "PhD"]
CITIES = [
    ("Springfield", "IL", "62701", "USA"), ("Berlin", "", "10115", "Germany"),
    ("München", "BY", "80331", "Germany"), ("Paris", "", "75001", "France"),
    ("København", "", "1050", "Denmark"), ("Tokyo", "", "100-0001", "Japan"),
    ("Toronto", "ON", "M5H 2N2", "Canada"), ("Austin", "TX", "73301", "USA"),
    ("Zürich", "ZH", "8001", "Switzerland"), ("Lisboa", "", "1100-148", "Portugal"),
]
STREETS = ["Main St", "Hauptstraße", "Rue de la Paix", "Elm Avenue",
           "Bahnhofstr.", "Oak Lane", "High Street", "Via Roma", "Lake Road"]
ORGS = ["Acme Corp", "Globex", "Initech", "Umbrella Research", "Stark Industries",
        "Wayne Enterprises", "Müller & Söhne GmbH", "Tyrell Corporation",
        "Hooli", "Vandelay Industries"]
CATS = ["friends", "family", "work", "school", "football", "book club",
        "neighbours", "choir", "VIP", "climbing", "chess"]
MAIL_DOMAINS = ["example.com", "example.org", "example.net", "mail.example",
                "post.example.de"]
WORDS = ("met at the conference in spring likes dark chocolate and jazz "
         "allergic to peanuts prefers calls after six has two kids and a dog "
         "ask about the new job remember the marathon gift ideas books tea "
         "plants vinyl records travelled to Japan last year birthday dinner "
         "usually at the Italian place café crème brûlée naïve résumé").split()
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

CRLF = "\r\n"


def fold(line):
    """Fold a content line at 75 octets (RFC 6350 3.2), CRLF + single space,
    never splitting a UTF-8 multi-byte sequence."""
    if len(line.encode("utf-8")) <= 75:
        return line
    out = []
    cur = []
    cur_len = 0
    limit = 75
    for ch in line:
        n = len(ch.encode("utf-8"))
        if cur_len + n > limit:
            out.append("".join(cur))
            cur = [" "]
            cur_len = 1
            limit = 75
        cur.append(ch)
        cur_len += n
    out.append("".join(cur))
    return CRLF.join(out)


def esc_text(s):
    """vCard 3.0/4.0 TEXT escaping."""
    return (s.replace("\\", "\\\\").replace(",", "\\,")
             .replace(";", "\\;").replace("\n", "\\n"))


def qp_encode(s):
    """Quoted-printable (RFC 2045) for a short single-line value; encodes
    everything outside printable ASCII and '='."""
    out = []
    for b in s.encode("utf-8"):
        if 33 <= b <= 126 and b != 61:
            out.append(chr(b))
        elif b == 32:
            out.append(" ")
        else:
            out.append("=%02X" % b)
    return "".join(out)


def rem_escape(s):
    """Escape remind MSG body specials: '%' starts a substitution and '['
    starts an expression."""
    return s.replace("[", "\x00").replace("%", "%%").replace("\x00", '["["]')


def make_note(rng):
    n = rng.choice((3, 5, 8, 12, 20, 30))
    words = [rng.choice(WORDS) for _ in range(n)]
    if n >= 12 and rng.random() < 0.4:
        words.insert(n // 2, "\n")
    text = " ".join(words).replace(" \n ", "\n")
    return text[0].upper() + text[1:] + "."


def pick_bday(rng):
    """Return (bday_line or None, (month, day) or None)."""
    r = rng.random()
    if r < 0.10:
        return None, None
    if r < 0.11:
        return "BDAY;VALUE=text:circa %d" % rng.randint(1950, 1995), None
    if r < 0.114:  # a few Feb 29
        if rng.random() < 0.5:
            return "BDAY:--0229", (2, 29)
        y = rng.choice((1960, 1972, 1984, 1992, 1996, 2000, 2004))
        return "BDAY:%d-02-29" % y, (2, 29)
    m = rng.randint(1, 12)
    d = rng.randint(1, DAYS_IN_MONTH[m - 1])
    y = rng.randint(1940, 2015)
    form = rng.random()
    if form < 0.35:
        line = "BDAY:%04d-%02d-%02d" % (y, m, d)
    elif form < 0.55:
        line = "BDAY:%04d%02d%02d" % (y, m, d)
    elif form < 0.67:
        line = "BDAY:--%02d%02d" % (m, d)
    elif form < 0.77:
        line = "BDAY:--%02d-%02d" % (m, d)
    elif form < 0.88:
        line = "BDAY:%04d-%02d-%02dT00:00:00Z" % (y, m, d)
    else:
        line = "BDAY;X-APPLE-OMIT-YEAR=1604:1604-%02d-%02d" % (m, d)
    return line, (m, d)


def make_card(rng, i):
    r = rng.random()
    version = "3.0" if r < 0.55 else ("4.0" if r < 0.95 else "2.1")

    first = rng.choice(FIRST)
    last = rng.choice(LAST)
    middle = rng.choice(MIDDLE) if rng.random() < 0.15 else ""
    prefix = rng.choice(PREFIX) if rng.random() < 0.05 else ""
    suffix = rng.choice(SUFFIX) if rng.random() < 0.04 else ""
    fn = " ".join(p for p in (prefix, first, middle, last) if p)
    if suffix:
        fn += ", " + suffix

    lines = ["BEGIN:VCARD", "VERSION:" + version]
    props = []  # shuffled-order properties

    if version == "2.1":
        lines.append("N;CHARSET=UTF-8:%s;%s;%s;%s;%s"
                     % (last, first, middle, prefix, suffix))
        lines.append("FN;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:" + qp_encode(fn))
    else:
        lines.append("N:%s;%s;%s;%s;%s" % tuple(
            esc_text(x) for x in (last, first, middle, prefix, suffix)))
        lines.append("FN:" + esc_text(fn))

    if rng.random() < 0.85:
        u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        props.append("UID:" + ("urn:uuid:" + u if version == "4.0" else u.upper()))

    bday, md = pick_bday(rng)
    if bday:
        props.append(bday)

    # phones
    for k in range(rng.choice((0, 1, 1, 1, 1, 2, 3))):
        num = "+%d %03d %07d" % (rng.choice((1, 44, 49, 33, 81)),
                                 rng.randint(100, 999), rng.randint(0, 9999999))
        kind = ("CELL", "HOME", "WORK")[k % 3]
        if version == "2.1":
            props.append("TEL;%s;VOICE:%s" % (kind, num))
        elif version == "4.0":
            props.append("TEL;VALUE=uri;TYPE=%s:tel:%s"
                         % (kind.lower(), num.replace(" ", "-")))
        else:
            props.append("TEL;TYPE=%s,VOICE:%s" % (kind, num))

    # emails
    for k in range(rng.choice((0, 1, 1, 1, 1, 2))):
        addr = "%s.%s%d@%s" % (
            first.lower().encode("ascii", "ignore").decode() or "x",
            last.lower().replace(" ", "").replace("'", "")
                .encode("ascii", "ignore").decode() or "y",
            rng.randint(1, 999), rng.choice(MAIL_DOMAINS))
        kind = ("home", "work", "other")[k % 3]
        if version == "2.1":
            props.append("EMAIL;INTERNET:" + addr)
        elif version == "3.0" and k == 0 and rng.random() < 0.3:
            props.append("item1.EMAIL;TYPE=INTERNET:" + addr)
            props.append("item1.X-ABLabel:_$!<Other>!$_")
        else:
            props.append("EMAIL;TYPE=%s:%s" % (kind, addr))

    # address
    if rng.random() < 0.25:
        city, region, code, country = rng.choice(CITIES)
        street = "%d %s" % (rng.randint(1, 300), rng.choice(STREETS))
        parts = ";".join(esc_text(x) for x in
                         ("", "", street, city, region, code, country))
        if version == "2.1":
            props.append("ADR;HOME;CHARSET=UTF-8:" + parts)
        elif version == "3.0" and rng.random() < 0.3:
            props.append("item2.ADR;TYPE=HOME:" + parts)
            props.append("item2.X-ABADR:" + country[:2].lower())
        else:
            props.append("ADR;TYPE=home:" + parts)

    if version != "2.1" and rng.random() < 0.20:
        props.append("CATEGORIES:" + ",".join(
            esc_text(c) for c in rng.sample(CATS, rng.randint(1, 3))))
    if rng.random() < 0.15:
        props.append("ORG:" + esc_text(rng.choice(ORGS))
                     + (";Engineering" if rng.random() < 0.5 else ""))
    if rng.random() < 0.25:
        note = make_note(rng)
        if version == "2.1":
            # keep 2.1 notes single-line ASCII-safe (2.1 folding differs)
            props.append("NOTE:" + note.replace("\n", " ")
                         .encode("ascii", "ignore").decode()[:70])
        else:
            props.append("NOTE:" + esc_text(note))
    if version == "4.0" and rng.random() < 0.2:
        props.append("REV:2023%02d%02dT%02d%02d%02dZ" % (
            rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
            rng.randint(0, 59), rng.randint(0, 59)))
    if version == "3.0" and rng.random() < 0.1:
        props.append("PRODID:-//Apple Inc.//iPhone OS 17.0//EN")

    rng.shuffle(props)
    lines.extend(props)
    # Anniversaries (BENCH_ANNIVERSARIES, a fraction of the cards) come from a
    # random stream of their own, after the shuffle, so the rest of every card
    # is the same with or without them.
    if ANNIVERSARIES > 0 and ANNIV_RNG.random() < ANNIVERSARIES:
        year = ANNIV_RNG.randint(1960, 2023)
        month = ANNIV_RNG.randint(1, 12)
        day = ANNIV_RNG.randint(1, 28 if month == 2 else 30)
        form = ANNIV_RNG.random()
        if version == "4.0":
            lines.append("ANNIVERSARY:%04d%02d%02d" % (year, month, day))
        elif form < 0.5 and version == "3.0":
            lines.append("item9.X-ABDATE;type=pref:%04d-%02d-%02d" % (year, month, day))
            lines.append("item9.X-ABLabel:_$!<Anniversary>!$_")
        else:
            lines.append("X-ANNIVERSARY:%04d-%02d-%02d" % (year, month, day))
    # Labelled dates (BENCH_DATES, a fraction of the cards): Apple's
    # itemN.X-ABDATE with an X-ABLabel other than the anniversary one, on a
    # random stream of their own too, so the rest of every card (anniversaries
    # included) is the same with or without them.
    if DATES > 0 and DATES_RNG.random() < DATES:
        year = DATES_RNG.randint(1960, 2024)
        month = DATES_RNG.randint(1, 12)
        day = DATES_RNG.randint(1, 28 if month == 2 else 30)
        label = DATES_RNG.choice(DATE_LABELS)
        lines.append("item8.X-ABDATE:%04d-%02d-%02d" % (year, month, day))
        lines.append("item8.X-ABLabel:" + label)
    lines.append("END:VCARD")

    if version == "2.1":
        text = CRLF.join(lines) + CRLF
    else:
        text = CRLF.join(fold(ln) for ln in lines) + CRLF
    return text, fn, md


# The fraction of cards with an anniversary (0 to 1; default 0: none, the
# cards of earlier runs byte for byte).
ANNIVERSARIES = float(os.environ.get("BENCH_ANNIVERSARIES", "0") or 0)
ANNIV_RNG = random.Random(SEED + 1)
# The fraction of cards with a labelled date (0 to 1; default 0: none).
DATES = float(os.environ.get("BENCH_DATES", "0") or 0)
DATES_RNG = random.Random(SEED + 2)
# Custom labels as Apple writes them, and Apple's own "Other".
DATE_LABELS = ["Graduation", "First met", "Adoption", "Retirement", "Moved in",
               "_$!<Other>!$_"]


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 100000
    vcf_path = argv[2] if len(argv) > 2 else "cards.vcf"
    rem_path = argv[3] if len(argv) > 3 else "cards.rem"
    rng = random.Random(SEED)
    total = 0
    with_bday = 0
    with open(vcf_path, "w", encoding="utf-8", newline="") as vcf, \
            open(rem_path, "w", encoding="utf-8", newline="\n") as rem:
        rem.write("# Generated by generate_cards.py: one yearly reminder per "
                  "birthday, warned one day before.\n")
        for i in range(n):
            text, fn, md = make_card(rng, i)
            vcf.write(text)
            total += len(text.encode("utf-8"))
            if md:
                with_bday += 1
                m, d = md
                rem.write("REM %d %s +1 MSG Birthday: %s\n"
                          % (d, MONTHS[m - 1], rem_escape(fn)))
    sys.stderr.write("generated %d cards (%d with a month/day birthday), "
                     "%d bytes (%.1f bytes/card) -> %s, %s\n"
                     % (n, with_bday, total, total / max(n, 1), vcf_path, rem_path))


if __name__ == "__main__":
    main(sys.argv)
