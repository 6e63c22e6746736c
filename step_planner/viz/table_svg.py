"""The table seen from above, as SVG text for the page of ``step-planner hmi`` (plain Python, no rclpy).

WHY from the snapshot: :func:`table_svg` draws :func:`~step_planner.viz.scene_snapshot.scene_snapshot`, the same
data the RViz markers are built from, so the person's picture and the engineer's agree and both are tested
without a browser or ROS.

The view is the robot's own, top-down: the arm's base (the frame origin) at the bottom, ``x`` (away from the
robot) up the picture, ``y`` (the robot's left) to the left. One SVG unit is one millimetre. Every drawn thing is
a ``<g>`` with data attributes a page test (or a person's tools) can read: ``data-object`` / ``data-place``
(the name), ``data-x`` / ``data-y`` (its centre in metres, robot base frame), and its state
(``data-believed``, ``data-held``, ``data-open``, ``data-holds``). Colour is never the only signal: a drawer
says "open" or "closed", an object only believed is dashed and says "believed", a held one "held", a fact ✓ or ✗.
All text is escaped; ids are made of safe characters, names stay exact in the data attributes.
"""

from __future__ import annotations

import re
from typing import Any
from xml.sax.saxutils import escape, quoteattr

MM = 1000.0  # SVG units per metre
MARGIN = 0.08  # m around what is drawn
ARM_RADIUS = 0.07  # m: the arm's base as drawn
PLACE_FILL = {"table": ("#e7dfcf", 1.0), "container": ("#bfd3f2", 0.85)}
DRAWER_FILL = {True: ("#c9ecd2", 0.9), False: ("#f3c9c4", 0.9)}  # open, closed
BELIEVED_FILL = "#9ca3af"
ACTIVE_STROKE = "#ea580c"
MET, UNMET = "\u2713", "\u2717"  # ✓ ✗


def _hex(rgba: list[float]) -> str:
    r, g, b = (max(0, min(255, round(float(c) * 255))) for c in rgba[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _n(v: float) -> str:
    return f"{v:.1f}"


def _metres(v: float) -> str:
    return f"{v:.4f}"


def screen(x: float, y: float) -> tuple[float, float]:
    """SVG coordinates (mm) of a point of the robot base frame (m): x up the picture, y to the left."""
    return -y * MM, -x * MM


def safe_id(prefix: str, name: str, taken: set[str]) -> str:
    """An id from a name: letters, digits, ``_`` and ``-`` only, unique in ``taken``."""
    base = f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}"
    out, k = base, 2
    while out in taken:
        out, k = f"{base}-{k}", k + 1
    taken.add(out)
    return out


def _attrs(**kv: Any) -> str:
    parts = []
    for key, value in kv.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        parts.append(f"{key.rstrip('_').replace('_', '-')}={quoteattr(str(value))}")
    return " ".join(parts)


def _bounds(snap: dict[str, Any]) -> tuple[float, float, float, float]:
    xs, ys = [-ARM_RADIUS, ARM_RADIUS], [-ARM_RADIUS, ARM_RADIUS]
    for p in snap["places"]:
        xs += [p["lo"][0], p["hi"][0]]
        ys += [p["lo"][1], p["hi"][1]]
    for o in snap["objects"]:
        r = max(o["half"][:2])
        xs += [o["centre"][0] - r, o["centre"][0] + r]
        ys += [o["centre"][1] - r, o["centre"][1] + r]
    return min(xs) - MARGIN, max(xs) + MARGIN, min(ys) - MARGIN, max(ys) + MARGIN


def destinations(snap: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Place name -> the goal's facts that end there (the last place a fact names, e.g. ``in(tape, drawer)``,
    ``closed(drawer)``)."""
    places = {p["name"] for p in snap["places"]}
    out: dict[str, list[dict[str, Any]]] = {}
    for fact in snap["facts"]:
        where = next((n for n in reversed(fact["names"]) if n in places), None)
        if where is not None:
            out.setdefault(where, []).append(fact)
    return out


def _fact_label(fact: dict[str, Any], place: str) -> str:
    mark = MET if fact["holds"] else UNMET
    others = [n for n in fact["names"] if n != place]  # in(tape, drawer) -> tape; closed(drawer) -> closed
    return f"{mark} {', '.join(others) if others else fact['text'].split('(')[0].strip()}"


def table_svg(snap: dict[str, Any], title: str = "The table seen from above") -> str:
    """The SVG (one ``<svg>`` element, text) of a scene snapshot, as the module doc says."""
    x0, x1, y0, y1 = _bounds(snap)
    font = max(y1 - y0, x1 - x0) * MM * 0.03
    goal_at = destinations(snap)
    for place in snap["places"]:  # room for the goal's ticks listed under a destination
        if place["name"] in goal_at:
            x0 = min(x0, place["lo"][0] - (1.2 * len(goal_at[place["name"]]) + 0.4) * font / MM)
    left, top = screen(x1, y1)
    width, height = (y1 - y0) * MM, (x1 - x0) * MM
    taken: set[str] = set()
    held = [o["name"] for o in snap["objects"] if o["held"]]
    handles = snap.get("handles")
    summary = _summary(snap, held)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="table-svg" viewBox="{_n(left)} {_n(top)} {_n(width)} '
           f'{_n(height)}" role="img" aria-labelledby="table-title table-desc" overflow="visible" '
           f'font-family="system-ui, sans-serif" '
           f'font-size="{_n(font)}">',
           f'<title id="table-title">{escape(title)}</title>', f'<desc id="table-desc">{escape(summary)}</desc>']
    order = {"table": 0, "container": 1, "drawer": 2}
    places = sorted(snap["places"], key=lambda p: order.get(p["kind"], 3))
    labels: list[tuple[float, float, float, float]] = []  # label boxes placed so far (SVG units)
    label_at: dict[str, float] = {}
    for place in places:  # each place's name at its corner (a line lower when another's is there: stacked
        (lx, _, _), (hx, hy, _) = place["lo"], place["hi"]  # drawers share a footprint), the goal's ticks under it
        sx, sy = screen(hx, hy)
        width_of = 0.58 * font * len(place_label(place))
        for k in range(6):
            y = sy + (1.05 + 1.2 * k) * font
            box = (sx, y - 0.95 * font, sx + width_of, y + 0.3 * font)
            if place["kind"] == "table" or not any(_overlap(box, b) for b in labels) or k == 5:
                break
        label_at[place["name"]] = y
        if place["kind"] != "table":
            labels.append(box)
        if place["name"] in goal_at:
            bottom = sy + (hx - lx) * MM
            labels.append((sx, bottom, sx + 8 * font, bottom + (1.2 * len(goal_at[place["name"]]) + 0.3) * font))
    drawn = [_place(place, goal_at.get(place["name"], []), font, taken, label_at[place["name"]]) for place in places]
    out.extend(shape for shape, _ in drawn)
    place_words = [words for _, words in drawn]
    for obj in snap["objects"]:
        out.append(_object(obj, obj["name"] == handles, font, taken, labels))
    out.extend(place_words)  # over the objects too: a name or a tick is never hidden
    ax, ay = screen(0.0, 0.0)
    caption = f"holding {', '.join(held)}" if held else "hand empty"
    out.append(f'<g {_attrs(id="arm", class_="arm", data_held=", ".join(held))}>'
               f'<circle cx="{_n(ax)}" cy="{_n(ay)}" r="{_n(ARM_RADIUS * MM)}" fill="#374151" fill-opacity="0.85"/>'
               f'<text x="{_n(ax)}" y="{_n(ay + 0.35 * font)}" text-anchor="middle" fill="#ffffff">arm</text>'
               f'<text x="{_n(ax)}" y="{_n(ay + ARM_RADIUS * MM + 1.1 * font)}" text-anchor="middle" fill="#111827" '
               f'stroke="#ffffff" stroke-width="{_n(font * 0.25)}" paint-order="stroke">{escape(caption)}</text></g>')
    out.append("</svg>")
    return "".join(out)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_label(place: dict[str, Any]) -> str:
    if place["kind"] == "drawer":
        return f"{place['name']} ({'open' if place['open'] else 'closed'})"
    return place["name"]


def _place(place: dict[str, Any], facts: list[dict[str, Any]], font: float, taken: set[str],
           label_y: float) -> tuple[str, str]:
    """The place's shape, and its words (name, state, the goal's ticks) drawn after every shape so none hides
    them (stacked drawers share a footprint); the words' group names its place in ``data-label-of``."""
    (lx, ly, _), (hx, hy, _) = place["lo"], place["hi"]
    sx, sy = screen(hx, hy)  # the top-left corner on screen: largest x, largest y
    w, h = (hy - ly) * MM, (hx - lx) * MM
    kind, name = place["kind"], place["name"]
    label = place_label(place)
    if kind == "drawer":
        fill, opacity = DRAWER_FILL[place["open"]]
        dash = None if place["open"] else f"{_n(font * 0.4)} {_n(font * 0.25)}"
    else:
        fill, opacity = PLACE_FILL.get(kind, PLACE_FILL["container"])
        dash = None
    attrs = _attrs(id=safe_id("place", name, taken), class_=f"place place-{kind}" + (" goal" if facts else ""),
                   data_place=name, data_kind=kind, data_x=_metres((lx + hx) / 2), data_y=_metres((ly + hy) / 2),
                   data_open=place.get("open"), data_goal=bool(facts) or None)
    shape = (f'<g {attrs}><rect x="{_n(sx)}" y="{_n(sy)}" width="{_n(w)}" height="{_n(h)}" fill="{fill}" '
             f'fill-opacity="{opacity}" stroke="{"#2563eb" if facts else "#6b7280"}" '
             f'stroke-width="{_n(font * (0.22 if facts else 0.08))}"'
             + (f' stroke-dasharray="{dash}"' if dash else "") + "/></g>")
    colour = "#4b5563" if kind == "table" else "#111827"  # a table's name in grey, at its corner
    parts = [f'<g {_attrs(class_="place-words", data_label_of=name)}>'
             f'<text x="{_n(sx + font * 0.3)}" y="{_n(label_y)}" fill="{colour}" stroke="#ffffff" '
             f'stroke-width="{_n(font * 0.2)}" stroke-opacity="0.7" paint-order="stroke">{escape(label)}</text>']
    for k, fact in enumerate(facts):  # the goal's facts that end here, ticked when they hold, under the place
        y = sy + h + font * (1.05 + 1.2 * k)
        parts.append(f'<text {_attrs(class_="goal-fact", data_fact=fact["text"], data_holds=fact["holds"])} '
                     f'x="{_n(sx + font * 0.3)}" y="{_n(y)}" fill="{"#065f46" if fact["holds"] else "#991b1b"}" '
                     f'font-weight="bold">{escape(_fact_label(fact, name))}</text>')
    parts.append("</g>")
    return shape, "".join(parts)


def _label_spot(cx: float, cy: float, reach: float, text: str, font: float,
                placed: list[tuple[float, float, float, float]]) -> float:
    """The baseline of an object's label: under it, else above it, else further down or up, whichever first
    overlaps no label placed before (widths estimated from the text's length); ``placed`` gets its box."""
    half = 0.3 * font * len(text)
    spots = [cy + reach + 1.1 * font, cy - reach - 0.4 * font, cy + reach + 2.3 * font, cy - reach - 1.6 * font]
    for y in spots:
        box = (cx - half, y - 0.95 * font, cx + half, y + 0.25 * font)
        if not any(_overlap(box, b) for b in placed):
            placed.append(box)
            return y
    placed.append((cx - half, spots[0] - 0.95 * font, cx + half, spots[0] + 0.25 * font))
    return spots[0]


def _object(obj: dict[str, Any], active: bool, font: float, taken: set[str],
            labels: list[tuple[float, float, float, float]]) -> str:
    x, y = obj["centre"][0], obj["centre"][1]
    cx, cy = screen(x, y)
    hx, hy = obj["half"][0] * MM, obj["half"][1] * MM
    believed, held = obj["believed"], obj["held"]
    fill = BELIEVED_FILL if believed else _hex(obj["rgba"])
    edge = "#4b5563" if believed else "#111827"
    style = (f'fill="{fill}" fill-opacity="{0.45 if believed else 1.0}" stroke="{edge}" '
             f'stroke-width="{_n(font * 0.1)}"' + (f' stroke-dasharray="{_n(font * 0.3)} {_n(font * 0.2)}"'
                                                   if believed else ""))
    if obj["shape"] == "cylinder":
        shape = f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(hx)}" {style}/>'
    else:  # x half along the picture's vertical, y half along its horizontal; yaw turns counter-clockwise
        shape = (f'<rect x="{_n(cx - hy)}" y="{_n(cy - hx)}" width="{_n(2 * hy)}" height="{_n(2 * hx)}" {style} '
                 f'transform="rotate({_n(-float(obj["yaw"]))} {_n(cx)} {_n(cy)})"/>')
    reach = max(hx, hy)
    ring = (f'<circle class="active-ring" cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(reach + font * 0.6)}" fill="none" '
            f'stroke="{ACTIVE_STROKE}" stroke-width="{_n(font * 0.25)}"/>') if active else ""
    held_mark = (f'<rect x="{_n(cx - reach - font * 0.35)}" y="{_n(cy - reach - font * 0.35)}" '
                 f'width="{_n(2 * reach + font * 0.7)}" height="{_n(2 * reach + font * 0.7)}" fill="none" '
                 f'stroke="#111827" stroke-width="{_n(font * 0.15)}" rx="{_n(font * 0.2)}"/>') if held else ""
    notes = [w for w, on in (("believed", believed), ("held", held), ("now", active)) if on]
    label = obj["name"] + (f" ({', '.join(notes)})" if notes else "")
    attrs = _attrs(id=safe_id("object", obj["name"], taken),
                   class_=" ".join(["object", *(["believed"] if believed else []), *(["held"] if held else []),
                                    *(["active"] if active else [])]),
                   data_object=obj["name"], data_x=_metres(x), data_y=_metres(y), data_location=obj["location"],
                   data_believed=believed, data_held=held, data_active=active or None)
    weight = ' font-weight="bold"' if active else ""
    y = _label_spot(cx, cy, reach, label, font, labels)
    text = (f'<text x="{_n(cx)}" y="{_n(y)}" text-anchor="middle" fill="#111827" '
            f'stroke="#ffffff" stroke-width="{_n(font * 0.25)}" paint-order="stroke"{weight}>{escape(label)}</text>')
    return f"<g {attrs}>{ring}{held_mark}{shape}{text}</g>"


def _summary(snap: dict[str, Any], held: list[str]) -> str:
    """The picture in one text (the SVG's description, for screen readers)."""
    bits = []
    for o in snap["objects"]:
        where = "in the gripper" if o["held"] else f"at {o['location']}" if o["location"] else "placed"
        bits.append(f"{o['name']} {where}" + (" (believed, not seen)" if o["believed"] else ""))
    for p in snap["places"]:
        if p["kind"] == "drawer":
            bits.append(f"{p['name']} {'open' if p['open'] else 'closed'}")
    if not held:
        bits.append("the hand is empty")
    return "; ".join(bits) + "."
