"""The ledger of checks on held-out seeds: one check per version of a claims module, appended, never rewritten.

A claim that held on seeds someone looked at while writing it proves little, and a rerun that drew new seeds until
the claim held proves less. So the held-out seeds of a claims module are fixed by the SHA-256 of its own source
(:func:`.stats.held_out_seeds`), and each check of the module on them is one line of the committed file
``posenc_helpers/lab/ledger.jsonl``:

``{"date": "2026-12-06", "module": "claims", "hash": <SHA-256 of the module's source>, "seeds": [...],
"claims": {"<claim>": [k, n], ...}, "note": "..."}``

where each claim held on k of the n seeds, failures included. Lines are only ever appended, and the tests check over
the file's git history that every committed version begins with the one before it (:func:`is_prefix`). Three rules
keep a check from being retried until it passes:

1. One check per version: :func:`append` and :func:`read` refuse a second entry for the same module and hash
   (after the first, its seeds have been seen).
2. The hash is of the module's code, comments and docstrings out (:func:`.stats.source_hash`), so a reworded
   comment draws no new seeds, while any change to what the claims compute does.
3. A new version is judged on its own seeds **and every seed an earlier version was checked on**
   (:func:`append` refuses an entry that leaves one out), so editing a claim after a failure cannot shed the seed
   that failed it.

What the ledger cannot stop is a check run and never recorded; the tests' done-when check (each module's last entry
at its current hash, every claim on every seed) is what makes an unrecorded check useless.

The sweeps that give the held-out rows are being re-scored by sequence (issue 43); until a module's first check is
appended, :func:`status` says so rather than report a check that was not made.

>>> is_prefix('{"a": 1}\\n', '{"a": 1}\\n{"b": 2}\\n'), is_prefix('{"a": 1}\\n', '{"a": 2}\\n')
(True, False)
"""

from __future__ import annotations

import datetime
import json
import numbers
from pathlib import Path

__all__ = ["PATH", "MODULES", "read", "entries", "seeds_so_far", "append", "is_prefix", "status"]

#: The committed ledger.
PATH = Path(__file__).with_name("ledger.jsonl")

#: The claims modules whose held-out checks the ledger records, by the name an entry gives.
MODULES = ("claims", "text_claims", "length_claims", "streaming")

_KEYS = ("date", "module", "hash", "seeds", "claims", "note")


def _check_entry(entry, where) -> dict:
    if not isinstance(entry, dict) or set(entry) != set(_KEYS):
        got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
        raise ValueError(f"{where}: an entry has exactly the keys {list(_KEYS)}, got {got}")
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
    if (not isinstance(seeds, list) or not seeds or len(set(seeds)) != len(seeds)
            or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in seeds)):
        raise ValueError(f"{where}: seeds must be a non-empty list of distinct integers, got {seeds!r}")
    claims = entry["claims"]
    if not isinstance(claims, dict) or not claims:
        raise ValueError(f"{where}: claims must map each claim to [k, n], got {claims!r}")
    for name, kn in claims.items():
        ok = (isinstance(kn, list) and len(kn) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in kn)
              and 0 <= kn[0] <= kn[1] <= len(seeds) and kn[1] > 0)
        if not ok:
            raise ValueError(f"{where}: claim {name!r} must hold on [k, n] seeds with 0 ≤ k ≤ n ≤ {len(seeds)} and "
                             f"n ≥ 1, got {kn!r}")
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
        missing = sorted(seeds_of.get(entry["module"], set()) - set(entry["seeds"]))
        if missing:
            raise ValueError(f"{where}: {entry['module']} was checked before on seeds {missing}, which this check "
                             "leaves out")
        seen[key] = number
        seeds_of.setdefault(entry["module"], set()).update(entry["seeds"])
        out.append(entry)
    return out


def seeds_so_far(module, path=PATH) -> list[int]:
    """Every seed an entry of ``module`` was checked on: each new check must include them all."""
    return sorted({s for e in entries(module, path) for s in e["seeds"]})


def entries(module, path=PATH) -> list[dict]:
    """The entries of one module, in order."""
    if module not in MODULES:
        raise ValueError(f"module must be one of {MODULES}, got {module!r}")
    return [e for e in read(path) if e["module"] == module]


def append(module, digest, seeds, claims, *, note="", date=None, path=PATH) -> dict:
    """Append one check: ``claims`` maps each claim to (k, n), the seeds it held on out of those checked.

    Refused, by name: a module not in :data:`MODULES`, a malformed hash, seeds or count, and a second check of the
    same source (module and hash): the first is the one that counts. ``date`` defaults to today. Returns the entry.
    """
    if date is None:
        date = datetime.date.today()
    entry = {"date": date.isoformat() if isinstance(date, datetime.date) else date, "module": module, "hash": digest,
             "seeds": [int(s) if isinstance(s, numbers.Integral) and not isinstance(s, bool) else s for s in seeds],
             "claims": {str(k): [*kn] if isinstance(kn, (list, tuple)) else kn for k, kn in claims.items()}
             if isinstance(claims, dict) else claims,
             "note": note}
    _check_entry(entry, "the new entry")
    missing = sorted(set(seeds_so_far(module, path)) - set(entry["seeds"]))
    if missing:
        raise ValueError(f"{module} was checked before on seeds {missing}: a new check must include them (a claim "
                         "edited after a failure is still judged on the seed that failed it)")
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
        line = (f"{module}: checked on {e['date']} on seeds {e['seeds']}: {len(e['claims']) - len(failed)} of "
                f"{len(e['claims'])} claims held on every seed checked")
        return line + "".join(f"; failed: {name!r} held on {k} of {n}" for name, (k, n) in failed.items())
    if mine:
        return (f"{module}: its claims changed since their last check ({mine[-1]['date']}, hash "
                f"{mine[-1]['hash'][:12]}…): not yet checked on the seeds of this source")
    return f"{module}: no check on held-out seeds recorded yet"
