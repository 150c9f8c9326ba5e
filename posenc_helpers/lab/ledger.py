"""The ledger of checks on held-out seeds: one check per version of a claims module, appended, never rewritten.

A claim that held on seeds someone looked at while writing it proves little, and a rerun that drew new seeds until
the claim held proves less. So the held-out seeds of a claims module are fixed by the SHA-256 of its own source
(:func:`.stats.held_out_seeds`), and each check of the module on them is one line of the committed file
``posenc_helpers/lab/ledger.jsonl``:

``{"date": "2026-12-06", "module": "claims", "hash": <SHA-256 of the module's code>, "drawn": [...],
"exclude": [...], "seeds": [...], "claims": {"<claim>": [k, n], ...}, "note": "..."}``, and optionally
``"ratios": {"<claim>": r, ...}``

where ``drawn`` are the seeds :func:`.stats.held_out_seeds` derives from the hash (skipping ``exclude``: the sweep's
own seeds and every seed checked before), ``seeds`` are ``drawn`` and the earlier seeds together (:func:`seeds_for`
gives both before the check is run), and each claim held on k of the n seeds, failures included. ``ratios``, where a
check records them, gives each claim's margin on its closest seed in units of its SE (``claims.margins``: negative
where it failed, null where the claim compares no number with an SE): a claim can hold on every held-out seed and
still hold on one by less than the 4 SEs its statement was given on the sweep, and :func:`status` counts those. Anyone can
recompute ``drawn`` from ``hash`` and ``exclude``; :func:`read` does, and refuses an entry whose seeds were not
derived from its hash. Lines are only ever appended, and the tests check over the file's git history that every
committed version begins with the one before it (:func:`is_prefix`). Three rules keep a check from being retried
until it passes:

1. One check per version: :func:`append` and :func:`read` refuse a second entry for the same module and hash
   (after the first, its seeds have been seen).
2. The hash is of the module's code, comments and docstrings out (:func:`.stats.source_hash`), so a reworded
   comment draws no new seeds, while any change to what the claims compute does.
3. A new version is judged on its own seeds **and every seed an earlier version was checked on**
   (:func:`append` and :func:`read` refuse an entry that leaves one out), so editing a claim after a failure cannot shed the seed
   that failed it.

What the ledger cannot stop is a check run and never recorded; the tests' done-when check (each module's last entry
at its current hash, every claim on every seed) is what makes an unrecorded check useless.

Notebook 16's claims (``streaming``) were checked first (``python -m tools.inference_lab --ledger``, 2026-12-07). The
other sweeps are being re-scored by sequence (issue 43); until a module's first check is appended, :func:`status`
says so rather than report a check that was not made.

>>> is_prefix('{"a": 1}\\n', '{"a": 1}\\n{"b": 2}\\n'), is_prefix('{"a": 1}\\n', '{"a": 2}\\n')
(True, False)
"""

from __future__ import annotations

import datetime
import json
import math
import numbers
from pathlib import Path

__all__ = ["PATH", "MODULES", "read", "entries", "seeds_so_far", "seeds_for", "append", "is_prefix", "status",
           "report"]

#: The committed ledger.
PATH = Path(__file__).with_name("ledger.jsonl")

#: The claims modules whose held-out checks the ledger records, by the name an entry gives.
MODULES = ("claims", "text_claims", "length_claims", "streaming")

_KEYS = ("date", "module", "hash", "drawn", "exclude", "seeds", "claims", "note")
_OPTIONAL = ("ratios",)

#: The margin, in SEs, a claim is stated with on its sweep (docs/CLAIMS.md); :func:`status` counts the claims that
#: held on a held-out seed by less.
ROOM = 4


def _ints(x) -> bool:
    return isinstance(x, list) and all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in x)


def _check_entry(entry, where) -> dict:
    if not isinstance(entry, dict) or not set(_KEYS) <= set(entry) <= set(_KEYS) | set(_OPTIONAL):
        got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
        raise ValueError(f"{where}: an entry has the keys {list(_KEYS)}, and optionally {list(_OPTIONAL)}, got {got}")
    if entry["module"] not in MODULES:
        raise ValueError(f"{where}: module must be one of {MODULES}, got {entry['module']!r}")
    digest = entry["hash"]
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"{where}: hash must be a SHA-256 in hex, got {digest!r}")
    try:
        datetime.date.fromisoformat(entry["date"])
    except (TypeError, ValueError):
        raise ValueError(f"{where}: date must be YYYY-MM-DD, got {entry['date']!r}") from None
    seeds = entry["seeds"]
    if not _ints(seeds) or not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"{where}: seeds must be a non-empty list of distinct integers, got {seeds!r}")
    drawn, exclude = entry["drawn"], entry["exclude"]
    if not _ints(drawn) or not drawn or not _ints(exclude):
        raise ValueError(f"{where}: drawn must be a non-empty list of integers and exclude a list of integers, got "
                         f"{drawn!r} and {exclude!r}")
    from .stats import held_out_seeds

    if list(drawn) != list(held_out_seeds(digest, len(drawn), exclude=exclude)):
        raise ValueError(f"{where}: seeds {drawn} are not the {len(drawn)} that stats.held_out_seeds derives from hash "
                         f"{digest[:12]}… skipping {exclude}")
    if not set(drawn) <= set(seeds):
        raise ValueError(f"{where}: the drawn seeds {sorted(set(drawn) - set(seeds))} were not checked")
    claims = entry["claims"]
    if not isinstance(claims, dict) or not claims:
        raise ValueError(f"{where}: claims must map each claim to [k, n], got {claims!r}")
    for name, kn in claims.items():
        ok = (isinstance(kn, list) and len(kn) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in kn)
              and 0 <= kn[0] <= kn[1] <= len(seeds) and kn[1] > 0)
        if not ok:
            raise ValueError(f"{where}: claim {name!r} must hold on [k, n] seeds with 0 ≤ k ≤ n ≤ {len(seeds)} and "
                             f"n ≥ 1, got {kn!r}")
    ratios = entry.get("ratios", {})
    if not isinstance(ratios, dict) or not set(ratios) <= set(claims):
        raise ValueError(f"{where}: ratios must map claims of the entry to their SE ratio, got {ratios!r}")
    for name, r in ratios.items():
        if r is not None and (isinstance(r, bool) or not isinstance(r, numbers.Real) or not math.isfinite(r)):
            raise ValueError(f"{where}: the ratio of claim {name!r} must be a finite number or null, got {r!r}")
    if not isinstance(entry["note"], str):
        raise ValueError(f"{where}: note must be a string, got {entry['note']!r}")
    return entry


def read(path=PATH) -> list[dict]:
    """Every entry of the ledger at ``path``, in order (an absent file has none). A malformed line, a second entry
    for one module and hash, or an entry that leaves out a seed an earlier entry of its module was checked on is a
    ValueError naming its line number."""
    path = Path(path)
    if not path.is_file():
        return []
    out, seen, seeds_of = [], {}, {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{path.name}, line {number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where} is not JSON ({error.msg})") from None
        entry = _check_entry(entry, where)
        key = (entry["module"], entry["hash"])
        if key in seen:
            raise ValueError(f"{where}: a second check of {entry['module']} at {entry['hash'][:12]}… (the first is "
                             f"line {seen[key]})")
        earlier = seeds_of.get(entry["module"], set())
        missing = sorted(earlier - set(entry["seeds"]))
        if missing:
            raise ValueError(f"{where}: {entry['module']} was checked before on seeds {missing}, which this check "
                             "leaves out")
        if not earlier <= set(entry["exclude"]) or set(entry["seeds"]) != earlier | set(entry["drawn"]):
            raise ValueError(f"{where}: seeds must be the drawn seeds and the earlier ones {sorted(earlier)}, drawn "
                             "skipping the earlier ones")
        seen[key] = number
        seeds_of.setdefault(entry["module"], set()).update(entry["seeds"])
        out.append(entry)
    return out


def seeds_so_far(module, path=PATH) -> list[int]:
    """Every seed an entry of ``module`` was checked on: each new check must include them all."""
    return sorted({s for e in entries(module, path) for s in e["seeds"]})


def seeds_for(module, digest, k, *, exclude=(), path=PATH) -> tuple[list[int], list[int], list[int]]:
    """The seeds a check of ``module`` at ``digest`` must run on, before it is run: (drawn, exclude, seeds).

    ``drawn``: ``k`` new seeds from the hash (:func:`.stats.held_out_seeds`), skipping ``exclude`` (the sweep's own
    seeds) and every seed checked before; ``seeds``: those and the earlier ones. Pass ``drawn`` and ``exclude`` to
    :func:`append` with the outcome.
    """
    from .stats import held_out_seeds

    earlier = seeds_so_far(module, path)
    skip = sorted({int(s) for s in exclude} | set(earlier))
    drawn = list(held_out_seeds(digest, k, exclude=skip))
    return drawn, skip, sorted(set(drawn) | set(earlier))


def entries(module, path=PATH) -> list[dict]:
    """The entries of one module, in order."""
    if module not in MODULES:
        raise ValueError(f"module must be one of {MODULES}, got {module!r}")
    return [e for e in read(path) if e["module"] == module]


def append(module, digest, drawn, claims, *, exclude=(), note="", date=None, path=PATH, ratios=None) -> dict:
    """Append one check: ``claims`` maps each claim to (k, n), the seeds it held on out of those checked.

    ``ratios``, if given, maps claims to their margin in SEs on the closest seed (None: no SE), kept to 2 decimals.

    ``drawn`` and ``exclude`` as :func:`seeds_for` gave them; the check ran on the drawn seeds and every earlier one.
    Refused, by name: a module not in :data:`MODULES`, a malformed hash or count, seeds that the hash does not give,
    and a second check of the same version (module and hash): the first is the one that counts. ``date`` defaults
    to today. Returns the entry.
    """
    if date is None:
        date = datetime.date.today()
    as_int = lambda xs: [int(s) if isinstance(s, numbers.Integral) and not isinstance(s, bool) else s  # noqa: E731
                         for s in xs]
    drawn, exclude = as_int(drawn), as_int(exclude)
    entry = {"date": date.isoformat() if isinstance(date, datetime.date) else date, "module": module, "hash": digest,
             "drawn": drawn, "exclude": exclude,
             "seeds": sorted(set(drawn) | set(seeds_so_far(module, path))) if _ints(drawn) else drawn,
             "claims": {str(k): [*kn] if isinstance(kn, (list, tuple)) else kn for k, kn in claims.items()}
             if isinstance(claims, dict) else claims,
             "note": note}
    if ratios is not None:
        real = lambda r: isinstance(r, numbers.Real) and not isinstance(r, bool) and math.isfinite(r)  # noqa: E731
        entry["ratios"] = {str(k): round(float(r), 2) if real(r) else r for k, r in ratios.items()}  # else refused
    _check_entry(entry, "the new entry")
    earlier = set(seeds_so_far(module, path))
    if not earlier <= set(exclude):
        raise ValueError(f"{module} was checked before on seeds {sorted(earlier - set(exclude))}: the new seeds must be "
                         "drawn skipping them (seeds_for), and the check run on them too (a claim edited after a "
                         "failure is still judged on the seed that failed it)")
    done = [e for e in read(path) if e["module"] == module and e["hash"] == digest]
    if done:
        raise ValueError(f"{module} at {digest[:12]}… was checked on {done[0]['date']}: its held-out seeds have been "
                         "seen, so a second check proves nothing; change the claims (a new hash, new seeds) instead")
    path = Path(path)
    text = path.read_text() if path.is_file() else ""
    if text and not text.endswith("\n"):
        raise ValueError(f"{path.name} does not end with a newline: it was edited by hand")
    with open(path, "a") as fh:
        fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return entry


def is_prefix(old: str, new: str) -> bool:
    """Whether the ledger's text ``new`` is ``old`` with lines appended (nothing rewritten, reordered or removed)."""
    return new.startswith(old) and (not old or old.endswith("\n"))


def status(module, digest, path=PATH) -> str:
    """What the ledger says of ``module`` at source hash ``digest``: its first check there, or why there is none."""
    mine = entries(module, path)
    here = [e for e in mine if e["hash"] == digest]
    if here:
        e = here[0]
        failed = {name: kn for name, kn in e["claims"].items() if kn[0] < kn[1]}
        # a claim is checked on every seed of the entry; a spread or a share is one statement over the pooled seeds
        pooled = [name for name, (k, n) in e["claims"].items() if n == 1 < len(e["seeds"])]
        claims = [name for name in e["claims"] if name not in pooled]
        line = (f"{module}: checked on {e['date']} on seeds {e['seeds']}: "
                f"{sum(name not in failed for name in claims)} of {len(claims)} claims held on every seed checked")
        if pooled:
            line += (f", and {sum(name not in failed for name in pooled)} of {len(pooled)} spreads and shares over "
                     "the pooled seeds (the sweep and these)")
        line += "".join(f"; failed: {name!r} held on {k} of {n}" for name, (k, n) in failed.items())
        thin = [name for name, r in e.get("ratios", {}).items() if r is not None and 0 <= r < ROOM and name not in failed]
        if thin:
            line += (f"; {len(thin)} of the claims held on some seed by less than {ROOM} SE: "
                     + ", ".join(repr(name) for name in thin))
        return line
    if mine:
        return (f"{module}: its claims changed since their last check ({mine[-1]['date']}, hash "
                f"{mine[-1]['hash'][:12]}…): not yet checked on the seeds of this source")
    return f"{module}: no check on held-out seeds recorded yet"


def report(module, digest, path=PATH) -> str:
    """:func:`status`, then, if the ledger holds a check of ``module`` at ``digest``, a line per claim.

    Each line: on how many of the seeds checked the claim held (k/n); its margin on the closest of them in SEs where
    the check recorded one ("—": the claim compares no number with an SE, or the check kept no ratios); and the
    one-sided 95 % Clopper–Pearson upper limit on its per-seed failure rate (:func:`.stats.failure_percent`: rounded
    up to a tenth of a percent, so that "below" stays true). A spread or a share is one statement over the pooled
    seeds, [1, 1] or [0, 1]: it gets no limit.

    >>> print(report("claims", "0" * 64, path="/nonexistent/ledger.jsonl"))
    claims: no check on held-out seeds recorded yet
    """
    from .stats import failure_percent

    lines = [status(module, digest, path)]
    here = [e for e in entries(module, path) if e["hash"] == digest]
    if not here:
        return lines[0]
    e = here[0]
    ratios = e.get("ratios", {})
    lines.append(f"{'held':>7} {'ratio':>6} {'failure rate':>13}  claim")
    for name, (k, n) in e["claims"].items():
        r = ratios.get(name)
        ratio = "—" if r is None else f"{r:.1f}"
        # a claim was checked on every seed of the entry; a spread or share is one statement ([k, 1])
        limit = f"< {failure_percent(k, n):.1f} %" if n == len(e["seeds"]) > 1 else ""
        lines.append(f"{k:>3}/{n:<3} {ratio:>6} {limit:>13}  {name}")
    return "\n".join(lines)
