"""The after-game archive: one self-contained HTML file (inline style, SVG, script).

Everything a reader needs is in the file: no external script, style, font or
image, so it opens offline and can be shared as it is. It reads fully without
JavaScript; the script only drives the "hide roles" toggle, which hides every
element marked `secret` (roles, teams, the private channels, the nights, the
hidden traffic) so a reader can step through the days without spoilers.
Every text that came from a user (names, stories, whispers, reasons, the
title) is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from html import escape

from core.archive import DayArchive, FeedLine, GameRecord, NightArchive, PayLine, Secret
from core.desk import DESK_ONLY, desk_text
from core.events import Event
from core.i18n import has_key, t
from core.narrate import describe, item_name, role_name, team_name, votes
from core.rules.items import ware
from core.team import Team

from .svg import timeline_svg

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1100px;padding:0 16px 48px;color:#1b1b1b;background:#fafafa}
h1{margin:18px 0 4px}h2{border-bottom:2px solid #ccc;margin-top:36px}
table{border-collapse:collapse;margin:8px 0;background:#fff}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}.muted{color:#666}.win{font-weight:bold}
.feed p{margin:4px 0;padding:4px 8px;background:#fff;border-left:4px solid #0072B2;
white-space:pre-wrap}.feed p.team{border-left-color:#D55E00;background:#fff7f0}
.when{color:#666;font-size:12px;margin-right:8px}.where{font-size:12px;color:#D55E00;
margin-right:8px}.chart{max-width:100%;height:auto;display:block}
nav a{margin-right:12px}#toggle{font-size:15px;padding:4px 12px;margin:8px 0}
.ph{display:none;color:#999;font-style:italic}
body.hide-roles .secret{display:none!important}body.hide-roles .ph{display:inline}
del{color:#999}
"""

SCRIPT = """
(function(){var b=document.getElementById('toggle');b.hidden=false;
b.addEventListener('click',function(){var h=document.body.classList.toggle('hide-roles');
b.textContent=h?b.dataset.show:b.dataset.hide;b.setAttribute('aria-pressed',h);});})();
"""

Names = Callable[[int], str]
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def e(value: object) -> str:
    return escape(str(value), quote=True)


def when(value: datetime | str | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.strftime("%Y-%m-%d %H:%M UTC")


def render(record: GameRecord, lang: str) -> str:
    names = _names(record, lang)
    parts = [
        f'<!doctype html><html lang="{e(lang)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{e(t('archive.html.title', lang, title=record.title))}</title>"
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{e(record.title)}</h1>",
        f'<p class="plot">{e(record.plot)}</p>' if record.plot else "",
        f'<button id="toggle" type="button" hidden aria-pressed="false" '
        f'data-hide="{e(t("archive.html.hide_roles", lang))}" '
        f'data-show="{e(t("archive.html.show_roles", lang))}">'
        f'{e(t("archive.html.hide_roles", lang))}</button>',
        _nav(lang),
        _setup(record, names, lang),
        _players(record, lang),
        _feed(record, names, lang),
        _days(record, names, lang),
        _nights(record, names, lang),
        _secrets(record, names, lang),
        _payouts(record, names, lang),
        f"<script>{SCRIPT}</script></body></html>",
    ]
    return "".join(parts)


def _names(record: GameRecord, lang: str) -> Names:
    master = t("term.master", lang)

    def name(uid: int) -> str:
        if uid == record.master:
            return master
        return record.names.get(uid, f"#{uid}")

    return name


def _text(event: Event, names: Names, lang: str) -> str:
    """An event as the bot wrote it, escaped; Markdown bold kept as bold."""
    try:
        # the master's desk accounts (the night explained...) read in the desk's words
        text = desk_text(event, names, lang) if event.kind in DESK_ONLY \
            else describe(event, names, lang, when)
    except (KeyError, ValueError):
        text = event.kind
    return _BOLD.sub(r"<b>\1</b>", e(text))


def _ph(lang: str) -> str:
    return f'<span class="ph">{e(t("archive.html.hidden", lang))}</span>'


def _nav(lang: str) -> str:
    links = [(k, t(f"archive.html.section.{k}", lang)) for k in
             ("setup", "players", "feed", "days", "nights", "secrets", "payouts")]
    return "<nav>" + "".join(f'<a href="#{k}">{e(v)}</a>' for k, v in links) + "</nav>"


def _setup(record: GameRecord, names: Names, lang: str) -> str:
    rows = [(t("archive.html.started", lang), when(record.started)),
            (t("archive.html.ended", lang), when(record.ended)),
            (t("archive.html.players_count", lang), str(len(record.players)))]
    if record.roles_text:
        rows.append((t("archive.html.roles_text", lang), record.roles_text))
    if record.composition:
        rows.append((t("archive.html.composition", lang), ", ".join(
            role_name(str(r[0]), lang) + (f" ×{r[1]}" if int(str(r[1])) > 1 else "")
            + (f" ({team_name(Team.clan(int(str(r[2]))), lang)})" if r[2] else "")
            for r in record.composition)))
    body = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows)
    options = []
    for key, value in record.options.model_dump().items():
        text = _option_label(key, lang)
        options.append(f"<tr><td><code>{e(key)}</code></td><td>{e(text)}</td>"
                       f"<td>{e(_value(value, lang))}</td></tr>")
    return (f'<section id="setup"><h2>{e(t("archive.html.section.setup", lang))}</h2>'
            f"<table>{body}</table><h3>{e(t('archive.html.options', lang))}</h3>"
            f"<table>{''.join(options)}</table></section>")


def _option_label(key: str, lang: str) -> str:
    for label in (f"signup.module.{key}", f"archive.html.option.{key}",
                  f"cmd.game.options.param.{key}.description"):
        if has_key(label):
            return t(label, lang)
    return key


def _value(value: object, lang: str) -> str:
    if isinstance(value, bool):
        return t("archive.html.yes" if value else "archive.html.no", lang)
    return str(value)


def _fate(row_cause: str | None, phase: str | None, number: int | None, lang: str) -> str:
    if row_cause is None:
        return t("term.alive", lang)
    return t("archive.html.fate", lang, cause=t(f"cause.{row_cause}", lang),
             phase=t(f"archive.html.phase.{phase}", lang, number=number or 0))


def _players(record: GameRecord, lang: str) -> str:
    head = "".join(f"<th>{e(t(f'archive.html.col.{c}', lang))}</th>"
                   for c in ("name", "role", "team", "fate"))
    rows = []
    for p in record.players:
        team = team_name(p.team, lang) if p.team else "—"
        win = f' class="win" title="{e(t("archive.html.winner", lang))}"' if p.winner else ""
        trophy = " ★" if p.winner else ""
        rows.append(
            f'<tr data-uid="{p.uid}"><td{win}>{e(p.name)}<span class="secret">{trophy}</span>'
            f'</td><td><span class="secret role">{e(role_name(p.role, lang))}</span>'
            f'{_ph(lang)}</td><td><span class="secret team">{e(team)}</span>{_ph(lang)}</td>'
            f"<td>{e(_fate(p.death_cause, p.death_phase, p.death_number, lang))}</td></tr>")
    if record.draw:
        result = t("archive.html.draw", lang)
    else:
        result = t("archive.html.winners", lang,
                   winners=", ".join(team_name(w, lang) for w in record.winners) or "—")
    return (f'<section id="players"><h2>{e(t("archive.html.section.players", lang))}</h2>'
            f'<p><b class="secret">{e(result)}</b>{_ph(lang)}</p>'
            f"<table><tr>{head}</tr>{''.join(rows)}</table></section>")


def _feed_line(line: FeedLine, names: Names, lang: str) -> str:
    where = ""
    cls = ""
    if line.team is not None:
        where = f'<span class="where">{e(team_name(line.team, lang))}</span>'
        cls = ' class="team secret"'
    return (f'<p{cls} data-seq="{line.seq}"><span class="when">{e(when(line.at))}</span>'
            f"{where}{_text(line.event, names, lang)}</p>")


def _feed(record: GameRecord, names: Names, lang: str) -> str:
    lines = "".join(_feed_line(x, names, lang) for x in record.feed)
    return (f'<section id="feed" class="feed"><h2>{e(t("archive.html.section.feed", lang))}'
            f'</h2><p class="muted">{e(t("archive.html.feed_note", lang))}</p>{lines}</section>')


def _day(day: DayArchive, names: Names, lang: str) -> str:
    tl = day.timeline
    head = "".join(f"<th>{e(t(f'archive.html.col.{c}', lang))}</th>"
                   for c in ("time", "voter", "vote", "weight", "note"))
    rows = []
    for step in tl.steps:
        if step.target is None:
            what = t("archive.html.withdrawn", lang,
                     name=names(step.previous) if step.previous is not None else "—")
        elif step.previous is not None:
            what = t("archive.html.changed", lang, name=names(step.target),
                     previous=names(step.previous))
        else:
            what = names(step.target)
        notes = []
        if step.shouts:
            notes.append(t("archive.html.shout", lang, count=step.shouts))
        if step.void:
            notes.append(t("archive.html.void", lang))
        if step.seq == tl.hammer_seq:
            notes.append(t("archive.html.hammer", lang))
        weight = votes(step.weight, lang) if step.target is not None else "—"
        cell = f"<del>{e(what)}</del>" if step.void else e(what)
        rows.append(f'<tr data-seq="{step.seq}"><td>{e(when(step.at))}</td>'
                    f"<td>{e(names(step.voter))}</td><td>{cell}</td><td>{e(weight)}</td>"
                    f"<td>{e('; '.join(notes))}</td></tr>")
    result = [f"<li>{e(names(uid))}: {e(votes(n, lang))}</li>"
              for uid, n in sorted(tl.final.items(), key=lambda kv: -kv[1])]
    if tl.hanged is None:
        verdict = t("archive.html.nobody_hanged", lang)
    else:
        verdict = t("archive.html.hanged", lang, name=names(tl.hanged))
    tie = ""
    if tl.tied:
        tie = "<p>" + e(t("archive.html.tie", lang,
                          tied=", ".join(names(u) for u in tl.tied), name=names(tl.hanged or 0),
                          decider=names(day.decider) if day.decider is not None else "—",
                          at=when(tl.hammer_at))) + "</p>"
    times = e(t("archive.html.day_times", lang, start=when(tl.start),
                deadline=when(tl.deadline), end=when(tl.end)))
    return (f'<article id="day-{tl.day}"><h3>{e(t("archive.html.day", lang, number=tl.day))}'
            f'</h3><p class="muted">{times}</p>{timeline_svg(tl, names, lang)}'
            f"<table><tr>{head}</tr>{''.join(rows)}</table>"
            f"<ul>{''.join(result)}</ul><p><b>{e(verdict)}</b></p>{tie}</article>")


def _days(record: GameRecord, names: Names, lang: str) -> str:
    body = "".join(_day(d, names, lang) for d in record.days)
    return f'<section id="days"><h2>{e(t("archive.html.section.days", lang))}</h2>{body}</section>'


def _night(night: NightArchive, record: GameRecord, names: Names, lang: str) -> str:
    roles = {p.uid: p.role for p in record.players}
    head = "".join(f"<th>{e(t(f'archive.html.col.{c}', lang))}</th>"
                   for c in ("time", "actor", "action", "target", "fallback", "story", "status"))
    rows = []
    for o in night.orders:
        action = t(f"action.{o.action}", lang) if o.action else "—"
        status = t("archive.html.kept" if o.kept else "archive.html.replaced", lang)
        actor = f"{names(o.actor)} ({role_name(roles.get(o.actor), lang)})"
        rows.append(f'<tr data-seq="{o.seq}"><td>{e(when(o.at))}</td><td>{e(actor)}</td>'
                    f"<td>{e(action)}</td><td>{e(names(o.target))}</td>"
                    f"<td>{e(names(o.fallback)) if o.fallback is not None else '—'}</td>"
                    f"<td>{e(o.story or '')}</td><td>{e(status)}</td></tr>")
    steps = []
    for ev in night.steps:
        who = _audience(ev, names, lang)
        steps.append(f"<li><span class=\"where\">{e(who)}</span>{_text(ev, names, lang)}</li>")
    checks = "".join(
        f"<li>{e(t('archive.html.check', lang, actor=names(a), target=names(tg), role=role_name(r, lang)))}</li>"  # noqa: E501
        for a, tg, r in night.checks)
    return (f'<article id="night-{night.number}"><h3>'
            f'{e(t("archive.html.night", lang, number=night.number))}</h3>'
            f"<table><tr>{head}</tr>{''.join(rows)}</table>"
            f"<h4>{e(t('archive.html.resolution', lang))}</h4><ol>{''.join(steps)}</ol>"
            + (f"<h4>{e(t('archive.html.checks', lang))}</h4><ul>{checks}</ul>" if checks else "")
            + "</article>")


def _audience(ev: Event, names: Names, lang: str) -> str:
    a = ev.audience
    if a.kind == "public":
        return t("archive.html.to_all", lang)
    if a.kind == "team":
        return team_name(a.team or "", lang)
    if a.kind == "master":
        return t("term.master", lang)
    return ", ".join(names(u) for u in a.players)


def _nights(record: GameRecord, names: Names, lang: str) -> str:
    body = "".join(_night(n, record, names, lang) for n in record.nights)
    return (f'<section id="nights"><h2>{e(t("archive.html.section.nights", lang))}</h2>'
            f'{_ph(lang)}<div class="secret">{body}</div></section>')


def _secret_row(s: Secret, names: Names, lang: str) -> str:
    kind = t(f"archive.html.secret.{s.kind}", lang)
    if s.kind in ("whisper", "anon"):
        sig = role_name(s.signature, lang) if s.signature else t("archive.html.unsigned", lang)
        to = role_name(s.role, lang) if s.role else t("archive.html.to_all", lang)
        detail = t("archive.html.post", lang, to=to, signature=sig)
        body = f"{e(detail)}<br>{e(s.text or '')}"
    elif s.kind == "effect":
        body = "; ".join(_text(ev, names, lang) for ev in s.results)
    elif s.kind == "shout":
        body = e(names(s.target or 0))
    else:
        what = s.what or ""
        label = item_name(what, None, lang) if ware(what) is not None else what
        extra = []
        if s.target is not None:
            extra.append(names(s.target))
        if s.against:
            extra.append(s.against)
        if s.if_hanged is not None:
            extra.append(t("archive.html.if_hanged", lang, name=names(s.if_hanged)))
        body = e(" — ".join([label, *extra]))
        results = "; ".join(_text(ev, names, lang) for ev in s.results)
        if results:
            body += f'<br><span class="muted">{results}</span>'
    return (f'<tr data-seq="{s.seq}"><td>{e(when(s.at))}</td><td>{e(kind)}</td>'
            f"<td>{e(names(s.sender))}</td><td>{body}</td></tr>")


def _secrets(record: GameRecord, names: Names, lang: str) -> str:
    head = "".join(f"<th>{e(t(f'archive.html.col.{c}', lang))}</th>"
                   for c in ("time", "kind", "sender", "content"))
    rows = "".join(_secret_row(s, names, lang) for s in record.secrets)
    table = f"<table><tr>{head}</tr>{rows}</table>" if rows else \
        f'<p class="muted">{e(t("archive.html.none", lang))}</p>'
    return (f'<section id="secrets"><h2>{e(t("archive.html.section.secrets", lang))}</h2>'
            f'{_ph(lang)}<div class="secret">{table}</div></section>')


def _arithmetic(line: PayLine, lang: str) -> str:
    if line.reason == "prize" and line.pool is not None:
        return t("archive.html.pay.prize", lang, pool=line.pool, shares=line.shares or 0,
                 amount=line.amount)
    if line.unit is not None:
        return t("archive.html.pay.times", lang, count=line.count, unit=line.unit,
                 amount=line.amount)
    return t("archive.html.pay.plain", lang, amount=line.amount)


def _payouts(record: GameRecord, names: Names, lang: str) -> str:
    if not record.options.currency:
        return (f'<section id="payouts"><h2>{e(t("archive.html.section.payouts", lang))}</h2>'
                f'<p class="muted">{e(t("archive.html.no_currency", lang))}</p></section>')
    head = "".join(f"<th>{e(t(f'archive.html.col.{c}', lang))}</th>"
                   for c in ("name", "reason", "arithmetic"))
    rows = []
    totals: dict[int, int] = {}
    for line in record.payouts:
        totals[line.uid] = totals.get(line.uid, 0) + line.amount
        reason = t(f"payouts.reason.{line.reason}", lang, count=line.count, amount=line.amount)
        rows.append(f"<tr><td>{e(names(line.uid))}</td><td>{e(reason)}</td>"
                    f"<td>{e(_arithmetic(line, lang))}</td></tr>")
    total_rows = "".join(f"<tr><td>{e(names(uid))}</td><td colspan=2>"
                         f"{e(t('currency.lira', lang, count=n))}</td></tr>"
                         for uid, n in totals.items())
    bonuses = "".join(
        f"<li>{e(names(b.uid))}: {e(t('currency.lira', lang, count=b.amount))} — "
        f"{e(b.reason)}{' ' + e(t('archive.html.secret_bonus', lang)) if b.secret else ''}</li>"
        for b in record.bonuses)
    return (f'<section id="payouts"><h2>{e(t("archive.html.section.payouts", lang))}</h2>'
            f"<table><tr>{head}</tr>{''.join(rows)}</table>"
            f"<h3>{e(t('archive.html.totals', lang))}</h3><table>{total_rows}</table>"
            f"<h3>{e(t('archive.html.bonuses', lang))}</h3>"
            + (f"<ul>{bonuses}</ul>" if bonuses else
               f'<p class="muted">{e(t("archive.html.none", lang))}</p>')
            + "</section>")
