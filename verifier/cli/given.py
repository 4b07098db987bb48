"""``check <statement> --weights FILE | --hf-model DIR --layer L [--tol X]``:
the instance and the weights of a statement about GIVEN weights.

Which statements read weights is read off their checkers (a ``weights``
keyword); every other combination is one line of bad input (exit 2): a
statement that reads no weights, ``--weights`` with ``--hf-model``, a
readout statement on a transformers layer (it has no W_D), ``--layer``
without ``--hf-model``, ``--tol`` for a statement without a tolerance, data
in two places (``--data`` and the dataset saved in the weights file), or
sizes (``--H``, ``--dh``, ``--dv``, ``--d``, ``--dout``) that contradict the
weights.

Where the data come from: ``--data`` (read as every data file is), else the
dataset in the weights file (``--save-weights`` writes one), else a
generated instance of the weights' sizes (``--n``, ``--T``, ``--context``,
``--seed``).
"""
from __future__ import annotations

import inspect

from verifier.errors import InvalidInstance

#: statements that run the whole layer (they need W_V, W_O, W_D)
READOUT = ("weights_memorize", "weights_classify")
TOLERANCE = ("weights_memorize",)


def reads_weights(st) -> bool:
    return st.check is not None and "weights" in inspect.signature(st.check).parameters


def _agree(flag: str, given, value, what: str) -> None:
    if given is not None and value is not None and given != value:
        raise InvalidInstance(f"{flag} {given} conflicts with the weights, which have {what} = {value}")


def given_inputs(args, st, opts: dict):
    """(instance, the checker's options) for ``check`` with given weights."""
    from verifier.data.instances import load_data, make_instance
    from verifier.data.weights import WEIGHT_NAMES, check_memory, dataset_instance, read_weights

    sid = st.id
    if not reads_weights(st):
        from verifier.statements import registry

        users = ", ".join(s for s, x in registry.REGISTRY.items() if x.implemented and reads_weights(x))
        flag = "--weights" if args.weights else "--hf-model" if args.hf_model else "--layer" if args.layer is not None \
            else "--tol"
        raise InvalidInstance(f"{flag}: {sid} reads no given weights; statements that do: {users}")
    if args.tol is not None and sid not in TOLERANCE:
        raise InvalidInstance(f"--tol: {sid} has no tolerance (it applies to {', '.join(TOLERANCE)})")
    if args.weights and args.hf_model:
        raise InvalidInstance("--weights and --hf-model both give the weights: give one")
    if args.layer is not None and not args.hf_model:
        raise InvalidInstance("--layer picks a layer of --hf-model DIR")
    seed = opts.get("seed") or 0
    options = {} if args.tol is None else {"tol": args.tol}
    if args.hf_model:
        from verifier.data.hf_layer import load_hf_layer

        if sid in READOUT:
            raise InvalidInstance(f"--hf-model: {sid} runs the whole layer, but a transformers attention layer has "
                                  "no readout W_D (d -> d_out); save the layer's weights with a readout and use "
                                  "--weights (weights_rank reads --hf-model)")
        if args.layer is None:
            raise InvalidInstance("--hf-model needs --layer L (0 = the first attention layer)")
        inst, w = load_hf_layer(args.hf_model, args.layer, args.data, exact_input=args.exact_input)
        return inst, {**options, "weights": w}
    if not args.weights:  # --tol alone: the verifier's own weights, on the usual instance
        from verifier.statements.runner import build_instance

        return build_instance(sid, data=args.data, exact_input=args.exact_input, **opts), options
    required = ("W_Q", "W_K") + (("W_V", "W_O", "W_D") if sid in READOUT else ())
    w = read_weights(args.weights, required=required, exact_input=args.exact_input, budget_T=opts.get("T") or 0)
    _agree("--H", opts.get("H") if args.H is not None else None, w.H, "H")
    _agree("--dh", args.d_h, w.d_h, "d_h")
    _agree("--dv", args.d_v, w.d_v, "d_v")
    _agree("--dout", args.d_out, w.d_out, "d_out")
    _agree("--d", args.d, w.d, "d")
    if args.data is not None:
        if w.dataset:
            raise InvalidInstance(f"--data {args.data} and the dataset saved in {args.weights} ("
                                  f"{', '.join(sorted(w.dataset))}): give the data once")
        inst = load_data(args.data, exact_input=args.exact_input, H=w.H, d_h=w.d_h, d_v=w.d_v or opts.get("d_v"),
                         d_out=w.d_out or opts.get("d_out"), seed=seed)
    elif w.dataset:
        inst = dataset_instance(w, exact_input=args.exact_input, seed=seed, d_v=opts.get("d_v"),
                                d_out=opts.get("d_out"))
    else:
        inst = make_instance(H=w.H, n=opts.get("n") or 3, d=w.d, d_h=w.d_h, d_v=w.d_v, d_out=w.d_out or 1,
                             T=opts.get("T"), context=opts.get("context") or "random",
                             degenerate=opts.get("degenerate"), seed=seed)
    check_memory({k: v.shape for k, v in w.mid.items() if k in WEIGHT_NAMES}, T=inst.T, n=inst.n,
                 what=str(args.weights))
    return inst, {**options, "weights": w}
