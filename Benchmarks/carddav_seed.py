#!/usr/bin/env python3
"""Fills a Radicale storage folder with one address book for the CardDAV benchmark.

Usage: carddav_seed.py CARDS.vcf STORAGE_COLLECTIONS USER [PHOTO_EVERY]

Splits CARDS.vcf (generate_cards.py's output) into one file per card in
STORAGE_COLLECTIONS/collection-root/USER/contacts/ (Radicale's layout), gives a
UID to cards without one, and adds a 15 kB PHOTO (base64 on one line, as
Radicale stores it) to every PHOTO_EVERY-th card (default 20: 5 %). Writing the
files directly is much faster than 10,000 PUTs; Radicale reads them as its own.
Standard library only, deterministic.
"""

import base64
import json
import os
import random
import sys


def main(argv):
    source, collections, user = argv[1], argv[2], argv[3]
    every = int(argv[4]) if len(argv) > 4 else 20
    book = os.path.join(collections, "collection-root", user, "contacts")
    os.makedirs(book, exist_ok=True)
    with open(os.path.join(book, ".Radicale.props"), "w") as f:
        json.dump({"D:displayname": "Contacts", "tag": "VADDRESSBOOK"}, f)
    rng = random.Random(6352)
    photo = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(11250))).decode()
    with open(source, encoding="utf-8", newline="") as f:
        text = f.read()
    cards = [c + "END:VCARD\r\n" for c in text.split("END:VCARD\r\n") if c.strip()]
    photos = 0
    owed = 0
    for i, card in enumerate(cards):
        lines = card.split("\r\n")
        if not any(line.upper().startswith("UID:") for line in lines):
            card = card.replace("\r\nEND:VCARD\r\n", "\r\nUID:bench-%05d\r\nEND:VCARD\r\n" % i)
        if i % every == 0:
            owed += 1
        # Radicale's vobject cannot serialize a vCard 2.1 PHOTO: the photo goes to the next 3.0/4.0 card.
        if owed and "VERSION:2.1" not in card:
            card = card.replace("\r\nEND:VCARD\r\n", "\r\nPHOTO;ENCODING=b;TYPE=JPEG:%s\r\nEND:VCARD\r\n" % photo)
            photos += 1
            owed -= 1
        with open(os.path.join(book, "card-%05d.vcf" % i), "w", encoding="utf-8", newline="") as out:
            out.write(card)
    sys.stderr.write("seeded %d cards (%d with a 15 kB photo) into %s\n" % (len(cards), photos, book))


if __name__ == "__main__":
    main(sys.argv)
