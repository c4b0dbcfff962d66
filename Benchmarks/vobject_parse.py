#!/usr/bin/env python3
"""Reference parser for the import benchmark.

Usage: vobject_parse.py FILE.vcf

Parses the whole file with vobject.readComponents (the default settings:
transform=True, so vCard 3.0 behaviours decode N/ADR/ORG etc.), reads every
card's BDAY value (as a string, no date arithmetic) and prints
"<cards> cards, <with BDAY> with BDAY".  Exits nonzero if vobject fails.
"""

import sys

import vobject


def main(path):
    cards = 0
    with_bday = 0
    # newline="" keeps CRLF as-is; vobject unfolds CRLF + space itself.
    with open(path, encoding="utf-8", newline="") as f:
        for comp in vobject.readComponents(f):
            if comp.name != "VCARD":
                continue
            cards += 1
            bday = comp.contents.get("bday")
            if bday and bday[0].value:
                with_bday += 1
    print("%d cards, %d with BDAY" % (cards, with_bday))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: vobject_parse.py FILE.vcf")
    main(sys.argv[1])
