"""``check`` / ``audit``: the instance's sizes against the memory budget
(:mod:`verifier.data.budget`) before anything is built.

Generated instances are estimated from the options (the statement's
defaults filled in); a data file is read header first by its reader (the
budget in force there too), and the instance it gives is estimated before
the checker builds anything on it.  A size above a cap its reader states
(Dana et al.'s N, S, T0) is left to the reader, whose reason no budget would
lift.
"""
from __future__ import annotations

from pathlib import Path

from verifier.data import budget


def build_within_budget(sid: str, st, options: dict, *, data, exact_input: bool, max_memory, build, agree):
    """``build(sid, data=..., exact_input=..., **options)`` under the budget
    ``max_memory`` (a size such as "64G"; None: the default), the sizes
    checked before and after; ``agree(inst)``: the options must not
    contradict the file."""
    limit = None if max_memory is None else budget.parse_size(max_memory)
    with budget.memory_budget(limit):
        if data is None:
            sizes = {k: v for k, v in st.options(**options).items() if k != "seed" and (isinstance(v, int) or v is None)}
            if not beyond_the_readers_caps(sizes):
                budget.check_sizes(f"{sid} on {budget.describe(sizes)}", budget.instance_terms(sizes))
        inst = build(sid, data=data, exact_input=exact_input, **options)
        if data is not None:
            agree(inst)
            sizes = budget.sizes_of(inst)
            budget.check_sizes(f"{sid} on {Path(data).name} ({budget.describe(sizes)})", budget.instance_terms(sizes))
    return inst


def beyond_the_readers_caps(sizes: dict) -> bool:
    """A size above a cap its reader states (Dana et al.'s N, S, T0), which no budget would lift."""
    try:
        from verifier.data import sequences as reader
    except ImportError:  # the readers reorganised: their caps then apply after the budget
        return False
    caps = {"N": "MAX_VOCABULARY", "S": "MAX_CONTEXT", "T0": "MAX_SEQUENCES"}
    return "V" not in sizes and any(isinstance(cap := getattr(reader, name, None), int) and (sizes.get(k) or 0) > cap
                                    for k, name in caps.items())
