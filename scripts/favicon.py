#!/usr/bin/env python3
"""Writes the cockpit's icon, share/cockpit/favicon.svg and share/cockpit/favicon.ico, from one
drawing: a white block "S" on a dark blue rounded square, 16 by 16. Deterministic; run it from
the repository root after changing the drawing, and commit both files."""

import struct

BACKGROUND = (0x1F, 0x3A, 0x5F)
FOREGROUND = (0xFF, 0xFF, 0xFF)
# The "S", as rectangles (x, y, width, height) on the 16 by 16 grid.
STROKES = [(4, 3, 8, 2), (4, 5, 2, 2), (4, 7, 8, 2), (10, 9, 2, 2), (4, 11, 8, 2)]
# The corners left transparent in the bitmap (the SVG rounds them with rx).
CORNER = {(0, 0), (1, 0), (0, 1)}

SVG = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">
<rect width="16" height="16" rx="3" fill="#{bg}"/>
<path fill="#{fg}" d="M4 3h8v2H6v2h6v6H4v-2h6V9H4z"/>
</svg>
"""


def pixel(x, y):
    for cx, cy in CORNER:
        for mx, my in ((cx, cy), (15 - cx, cy), (cx, 15 - cy), (15 - cx, 15 - cy)):
            if (x, y) == (mx, my):
                return None
    for sx, sy, w, h in STROKES:
        if sx <= x < sx + w and sy <= y < sy + h:
            return FOREGROUND
    return BACKGROUND


def ico():
    rows = []
    for y in reversed(range(16)):  # a BMP is stored bottom-up
        row = b""
        for x in range(16):
            p = pixel(x, y)
            row += bytes([0, 0, 0, 0]) if p is None else bytes([p[2], p[1], p[0], 0xFF])
        rows.append(row)
    mask = bytes(4 * 16)  # the AND mask: unused, alpha decides
    image = struct.pack("<IiiHHIIiiII", 40, 16, 32, 1, 32, 0, 16 * 16 * 4 + len(mask), 0, 0, 0, 0)
    image += b"".join(rows) + mask
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, len(image), 6 + 16)
    return header + entry + image


def hexrgb(c):
    return "%02x%02x%02x" % c


with open("share/cockpit/favicon.svg", "w") as f:
    f.write(SVG.format(bg=hexrgb(BACKGROUND), fg=hexrgb(FOREGROUND)))
with open("share/cockpit/favicon.ico", "wb") as f:
    f.write(ico())
