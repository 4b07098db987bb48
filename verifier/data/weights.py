"""Weights a user gives: one attention layer's parameters read as data.

A weight is a user's number like any other (:mod:`verifier.data.precision`):
a float stands for every real that rounds to it in its format (float16,
bfloat16, float32, float64, long double), an integer for itself, every value
for itself under ``--exact-input``.  :class:`GivenWeights` holds, per array,
the float64 midpoints and radii enclosing that set (:meth:`GivenWeights.ball`),
so that what a checker certifies on them holds for every weight they stand
for.

Files (:func:`read_weights`), read by their suffix:

* ``.npz`` / ``.json``: through :func:`verifier.data.files.read_data_file`
  (the one reader of data files: names checked, numbers read exactly), with
  the arrays ``--save-weights`` writes: ``W_Q``, ``W_K`` (H, d, d_h), ``W_V``
  (H, d, d_v), ``W_O`` (H d_v, d), ``W_D`` (d, d_out), ``skip_connection``
  (a boolean), and optionally the dataset ``contexts``, ``queries``,
  ``labels``;
* ``.pt`` / ``.pth``: a torch state dict (``torch.load(weights_only=True)``:
  no code runs) of tensors with the same names;
* ``.safetensors``: the same names (the ``safetensors`` package).

Shapes are checked against each other here and against the data by
:func:`check_against_data`: one line (:class:`~verifier.errors.InvalidInstance`,
exit 2) that names the array, its shape and the one expected.  A square
matrix given transposed cannot be told from the intended one: it is read as
given (``W_Q[h]`` maps tokens, its rows are token coordinates).  Sizes are
checked against :func:`~verifier.data.weights_budget.memory_budget` from the
files' headers, before any array is read.

>>> import numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
>>> np.savez(path, W_Q=np.ones((2, 5, 3), np.float32), W_K=np.ones((2, 5, 3), np.float32))
>>> w = read_weights(path, required=("W_Q", "W_K"))
>>> w.H, w.d, w.d_h, float(w.ball("W_Q").rad[0, 0, 0]) == 2.0**-24
(2, 5, 3, True)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from verifier.arith.balls import BallArray
from verifier.data.files import DataFile, GivenArray, _check_names, read_data_file
from verifier.data.given import OVERFLOW_LIMIT, add_up, float64_copy
from verifier.data.precision import ArrayPrecision, array_precision
from verifier.data.weights_budget import check_memory, npz_shapes
from verifier.errors import InvalidInstance

__all__ = ["WEIGHT_NAMES", "DATA_NAMES", "GivenWeights", "read_weights", "weights_from_arrays",
           "check_against_data", "check_memory", "dataset_instance"]

WEIGHT_NAMES = ("W_Q", "W_K", "W_V", "W_O", "W_D", "b_Q")
DATA_NAMES = ("contexts", "queries", "labels")
OTHER_NAMES = ("skip_connection",)
NDIM = {"W_Q": 3, "W_K": 3, "W_V": 3, "W_O": 2, "W_D": 2, "b_Q": 2}
LAYOUT = {"W_Q": "(H, d, d_h)", "W_K": "(H, d, d_h)", "W_V": "(H, d, d_v)", "W_O": "(H d_v, d)",
          "W_D": "(d, d_out)", "b_Q": "(H, d_h)"}
#: bfloat16 (torch, safetensors): 8 significand bits, float32's exponent range
BFLOAT16 = ArrayPrecision("bfloat16", "float", "bfloat16: each value stands for the reals that round to it", 8, -126)


@dataclass(frozen=True)
class GivenWeights:
    """One layer's weights as given: ``mid[name]`` float64 (read-only),
    ``rad[name]`` float64 radii enclosing every real the values stand for
    (None: exact), ``precision[name]`` their meaning.  ``augmented``: the
    tokens carry one extra constant coordinate 1 (a transformers layer's
    biases, :mod:`verifier.data.hf_layer`)."""

    mid: dict
    rad: dict
    precision: dict
    skip: bool = False
    source: str = "arrays"
    augmented: bool = False
    notes: tuple = ()
    dataset: dict = field(default_factory=dict)  # contexts/queries/labels found in the same file (GivenArray)

    def ball(self, name: str) -> BallArray:
        return BallArray(self.mid[name], self.rad.get(name))

    def has(self, *names: str) -> bool:
        return all(n in self.mid for n in names)

    @property
    def exact(self) -> bool:
        return all(self.rad.get(n) is None for n in self.mid)

    @property
    def H(self) -> int:
        return int(self.mid["W_Q"].shape[0])

    @property
    def d(self) -> int:
        return int(self.mid["W_Q"].shape[1])

    @property
    def d_h(self) -> int:
        return int(self.mid["W_Q"].shape[2])

    @property
    def d_v(self) -> int | None:
        return int(self.mid["W_V"].shape[2]) if "W_V" in self.mid else None

    @property
    def d_out(self) -> int | None:
        return int(self.mid["W_D"].shape[1]) if "W_D" in self.mid else None

    def key_query(self, instance):
        """(contexts, queries, W_K, W_Q) as the model's ball back ends read
        them (:mod:`verifier.model.mha_float`, :mod:`verifier.model.mha_balls`):
        the data at their precision (``Instance.balls``) and the weights'
        balls; a query bias b_Q becomes a last row of W_Q^h against a
        constant 1 appended to every query (E W_K (W_Q^T e + b_Q), exactly)."""
        E, e = instance.balls()
        WK, WQ = self.ball("W_K"), self.ball("W_Q")
        if "b_Q" not in self.mid:
            return E, e, WK, WQ
        e_mid, e_rad = (e.mid, e.rad) if isinstance(e, BallArray) else (np.asarray(e), None)
        T = e_mid.shape[0]
        e_aug = BallArray(np.hstack([e_mid, np.ones((T, 1))]),
                          None if e_rad is None else np.hstack([e_rad, np.zeros((T, 1))]))
        bq, bq_rad = self.mid["b_Q"], self.rad.get("b_Q")
        Q_rad = None
        if WQ.rad is not None or bq_rad is not None:
            Q_rad = np.concatenate([np.zeros(WQ.mid.shape) if WQ.rad is None else WQ.rad,
                                    (np.zeros(bq.shape) if bq_rad is None else bq_rad)[:, None, :]], axis=1)
        return E, e_aug, WK, BallArray(np.concatenate([WQ.mid, bq[:, None, :]], axis=1), Q_rad)

    def describe(self) -> dict:
        """{array: how its numbers were read} (the evidence's instance)."""
        out = {n: (f"{p.dtype}: exact" if self.rad.get(n) is None else p.describe())
               for n, p in self.precision.items()}
        return {"source": self.source, "skip connection": self.skip, "arrays": out,
                **({"tokens augmented by a constant 1": True} if self.augmented else {}),
                **({"notes": list(self.notes)} if self.notes else {})}


def _fail(where: str, msg: str):
    raise InvalidInstance(f"{where}: {msg}")


def _check_shapes(where: str, mid: dict) -> None:
    """Each array's rank and the sizes the arrays share (H, d, d_v)."""
    for name, a in mid.items():
        if a.ndim != NDIM[name]:
            _fail(where, f"{name} has shape {a.shape}; expected {LAYOUT[name]} ({NDIM[name]}-D)")
        if a.size == 0:
            _fail(where, f"{name} is empty (shape {a.shape})")
    if "W_Q" not in mid or "W_K" not in mid:
        _fail(where, "W_Q and W_K are needed")
    H, d, d_h = mid["W_Q"].shape
    if mid["W_K"].shape != (H, d, d_h):
        head = " (a different head count)" if mid["W_K"].shape[0] != H else \
            " (transposed?)" if mid["W_K"].shape == (H, d_h, d) else ""
        _fail(where, f"W_K has shape {mid['W_K'].shape}; expected {(H, d, d_h)} as W_Q{head}")
    if "b_Q" in mid and mid["b_Q"].shape != (H, d_h):
        _fail(where, f"b_Q has shape {mid['b_Q'].shape}; expected (H, d_h) = {(H, d_h)}")
    if "W_V" in mid and mid["W_V"].shape[:2] != (H, d):
        _fail(where, f"W_V has shape {mid['W_V'].shape}; expected (H, d, d_v) = ({H}, {d}, d_v)")
    if "W_O" in mid:
        if "W_V" not in mid:
            _fail(where, "W_O needs W_V")
        d_v = mid["W_V"].shape[2]
        if mid["W_O"].shape != (H * d_v, d):
            why = " (transposed?)" if mid["W_O"].shape == (d, H * d_v) else ""
            _fail(where, f"W_O has shape {mid['W_O'].shape}; expected (H d_v, d) = {(H * d_v, d)}{why}")
    if "W_D" in mid and mid["W_D"].shape[0] != d:
        why = " (transposed?)" if mid["W_D"].shape[1] == d else ""
        _fail(where, f"W_D has shape {mid['W_D'].shape}; expected (d, d_out) with d = {d}{why}")
    if any(n in mid for n in ("W_V", "W_O", "W_D")) and not all(n in mid for n in ("W_V", "W_O", "W_D")):
        _fail(where, "the readout needs all of W_V, W_O and W_D (has: "
                     + ", ".join(n for n in ("W_V", "W_O", "W_D") if n in mid) + ")")


def _ball_of(where: str, name: str, raw: np.ndarray, meaning: ArrayPrecision):
    """(float64 midpoints, radii or None) enclosing every value ``raw`` stands for."""
    if raw.dtype.kind == "b":
        _fail(where, f"{name} is boolean; expected numbers")
    if raw.dtype.kind == "f" and not np.all(np.isfinite(raw)):
        _fail(where, f"{name} has {int(np.sum(~np.isfinite(raw)))} NaN or infinite entries")
    top = max((abs(x) for x in raw.reshape(-1)), default=0) if raw.dtype.kind == "O" else np.max(np.abs(raw))
    if float(top) > OVERFLOW_LIMIT:
        _fail(where, f"{name} has entries above {OVERFLOW_LIMIT:g} in magnitude (overflow)")
    copy, _, extra, _ = float64_copy(name, raw)
    copy = np.array(copy, dtype=np.float64)
    rad = None if meaning.exact else meaning.radius(copy)  # a long double's copy: its exponent or one above
    if extra is not None:
        rad = np.asarray(extra, dtype=np.float64) if rad is None else add_up(rad, np.asarray(extra, np.float64))
    copy.setflags(write=False)
    if rad is not None:
        rad = np.asarray(rad, dtype=np.float64)
        rad.setflags(write=False)
    return copy, rad


def _skip_flag(where: str, a) -> bool:
    a = np.asarray(a)
    if a.size != 1 or a.dtype.kind not in "biu" or int(a.reshape(-1)[0]) not in (0, 1):
        _fail(where, f"skip_connection must be one boolean (or 0/1), got {a.dtype.name} of shape {a.shape}")
    return bool(a.reshape(-1)[0])


def weights_from_arrays(arrays: dict, *, precision: dict | None = None, exact_input: bool = False,
                        source: str = "arrays", skip: bool = False, augmented: bool = False, notes=(),
                        dataset: dict | None = None, where: str = "weights") -> GivenWeights:
    """Validate named weight arrays (numpy; ``precision[name]`` overrides the
    dtype's meaning, e.g. :data:`BFLOAT16`) into :class:`GivenWeights`."""
    mid, rad, meaning = {}, {}, {}
    for name, a in arrays.items():
        if name not in WEIGHT_NAMES:
            _fail(where, f"array '{name}' is not a weight this statement reads (expected: {', '.join(WEIGHT_NAMES)})")
        raw = a if isinstance(a, np.ndarray) else np.asarray(a)
        if raw.dtype.kind not in "biufO":
            _fail(where, f"{name} has dtype {raw.dtype.name}, not a number type")
        p = (precision or {}).get(name)
        if p is None or exact_input:
            p = array_precision(raw, exact=exact_input) if raw.dtype.kind != "O" else array_precision(raw)
        mid[name], r = _ball_of(where, name, raw, p)
        if r is not None:
            rad[name] = r
        meaning[name] = p
    _check_shapes(where, mid)
    return GivenWeights(mid, rad, meaning, skip=skip, source=source, augmented=augmented, notes=tuple(notes),
                        dataset=dict(dataset or {}))


# -- readers -------------------------------------------------------------------------------------------------------

def _from_datafile(f: DataFile, *, exact_input: bool) -> GivenWeights:
    arrays = {k: v.values for k, v in f.arrays.items() if k in WEIGHT_NAMES}
    precision = {k: v.precision for k, v in f.arrays.items() if k in WEIGHT_NAMES}
    skip = _skip_flag(f.path.name, f["skip_connection"].values) if "skip_connection" in f.arrays else False
    dataset = {k: v for k, v in f.arrays.items() if k in DATA_NAMES}
    return weights_from_arrays(arrays, precision=precision, exact_input=exact_input, source=f"file:{f.path.name}",
                               skip=skip, dataset=dataset, where=f.path.name)


def _torch_arrays(where: str, tensors: dict) -> tuple[dict, dict, object]:
    """numpy arrays (bfloat16 -> float32, exactly) and their meaning."""
    import torch

    arrays, precision, skip = {}, {}, None
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            _fail(where, f"entry '{name}' is a {type(t).__name__}, not a tensor")
        if t.is_complex():
            _fail(where, f"{name} is complex ({t.dtype}); the statements are about real data")
        if name == "skip_connection":
            skip = t.detach().cpu().numpy()
            continue
        if t.dtype == torch.bfloat16:
            arrays[name] = t.detach().cpu().float().numpy()  # exact: bfloat16 is float32's top 16 bits
            precision[name] = BFLOAT16
        else:
            try:
                arrays[name] = t.detach().cpu().numpy()
            except (TypeError, RuntimeError) as exc:
                _fail(where, f"{name} has dtype {t.dtype}, which numpy cannot read ({exc})")
    return arrays, precision, skip


def _read_torch(p: Path, required, optional, *, exact_input: bool, budget_T: int) -> GivenWeights:
    import torch

    try:
        try:
            obj = torch.load(p, map_location="cpu", weights_only=True, mmap=True)  # lazy: sizes before data
        except RuntimeError as exc:
            if "mmap" not in str(exc):
                raise
            obj = torch.load(p, map_location="cpu", weights_only=True)  # the legacy format cannot be mapped
    except Exception as exc:  # noqa: BLE001 - a forged or foreign pickle: one line, never a traceback
        _fail(p.name, f"cannot read as a torch state dict with weights_only=True: {type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:160] if str(exc) else ''}")
    if not isinstance(obj, dict):
        _fail(p.name, f"expected a state dict (a dict of named tensors), got {type(obj).__name__}")
    _check_names(p, list(obj), required, optional)
    check_memory({k: tuple(v.shape) for k, v in obj.items() if k in WEIGHT_NAMES and hasattr(v, "shape")},
                 T=budget_T, what=p.name)
    return _from_tensors(p, obj, exact_input=exact_input)


def _from_tensors(p: Path, tensors: dict, *, exact_input: bool) -> GivenWeights:
    arrays, precision, skip = _torch_arrays(p.name, tensors)
    data = {k: arrays.pop(k) for k in DATA_NAMES if k in arrays}
    dataset = {k: GivenArray(k, v, precision.get(k) or array_precision(v, exact=exact_input), p.suffix[1:])
               for k, v in data.items()}
    return weights_from_arrays(arrays, precision=precision, exact_input=exact_input, source=f"file:{p.name}",
                               skip=False if skip is None else _skip_flag(p.name, skip), dataset=dataset,
                               where=p.name)


def _read_safetensors(p: Path, required, optional, *, exact_input: bool, budget_T: int) -> GivenWeights:
    try:
        from safetensors import safe_open
    except ImportError:
        _fail(p.name, "reading .safetensors needs the safetensors package (pip install safetensors)")
    try:
        with safe_open(str(p), framework="pt") as fh:
            names = list(fh.keys())
            _check_names(p, names, required, optional)
            check_memory({k: tuple(fh.get_slice(k).get_shape()) for k in names if k in WEIGHT_NAMES},
                         T=budget_T, what=p.name)
            tensors = {k: fh.get_tensor(k) for k in names}
    except InvalidInstance:
        raise
    except Exception as exc:  # noqa: BLE001 - a corrupt header: one line
        _fail(p.name, f"cannot read as safetensors: {type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:160] if str(exc) else ''}")
    return _from_tensors(p, tensors, exact_input=exact_input)


def read_weights(path, *, required: tuple[str, ...] = ("W_Q", "W_K"), exact_input: bool = False,
                 budget_T: int = 0) -> GivenWeights:
    """The weights in ``path`` (.npz, .json, .pt/.pth, .safetensors): every
    name of ``required`` present, every other name one of the weights, the
    skip flag or the dataset; sizes checked against the memory budget
    (with ``budget_T`` examples) before the arrays are read."""
    p = Path(path)
    if p.is_dir():
        raise InvalidInstance(f"--weights {p}: is a directory; expected a .npz, .pt or .safetensors file "
                              "(a transformers model directory: --hf-model)")
    if not p.is_file():
        raise InvalidInstance(f"--weights: no such file: {p}")
    optional = tuple(n for n in WEIGHT_NAMES + OTHER_NAMES + DATA_NAMES if n not in required)
    suffix = p.suffix.lower()
    if suffix in (".pt", ".pth", ".bin"):
        return _read_torch(p, required, optional, exact_input=exact_input, budget_T=budget_T)
    if suffix == ".safetensors":
        return _read_safetensors(p, required, optional, exact_input=exact_input, budget_T=budget_T)
    if suffix not in (".npz", ".json"):
        raise InvalidInstance(f"--weights {p.name}: unknown suffix {p.suffix!r}; expected .npz, .json, .pt, .pth, "
                              ".bin or .safetensors")
    if suffix == ".npz":
        check_memory({k: v for k, v in npz_shapes(p).items() if k in WEIGHT_NAMES}, T=budget_T, what=p.name)
    f = read_data_file(p, required=required, optional=optional, exact_input=exact_input)
    return _from_datafile(f, exact_input=exact_input)


def dataset_instance(w: GivenWeights, *, exact_input: bool = False, seed: int = 0, d_v=None, d_out=None):
    """The instance of the dataset saved with the weights (``--save-weights``
    writes one), read as every data file is, at the weights' sizes."""
    from verifier.data.instances import from_arrays

    ds = w.dataset
    if "contexts" not in ds or "queries" not in ds:
        _fail(w.source.removeprefix("file:"), "a dataset needs both 'contexts' and 'queries' (has: "
                                              f"{', '.join(sorted(ds))})")
    labels = ds["labels"].values if "labels" in ds else None
    return from_arrays(ds["contexts"].values, ds["queries"].values, labels, H=w.H, d_h=w.d_h, d_v=w.d_v or d_v,
                       d_out=d_out, kind="user", seed=seed, source=w.source,
                       reading="exact" if exact_input else "dtype",
                       precision_source="--exact-input" if exact_input else "file",
                       readings={k: v.reading for k, v in ds.items()})


def check_against_data(w: GivenWeights, instance, *, readout: bool = False) -> None:
    """The weights' sizes against the data's: d (and the labels' d_out when
    ``readout``); one line naming both."""
    where = w.source.removeprefix("file:")
    if w.d != instance.d:
        transposed = " (transposed? W_Q given as (H, d_h, d))" if w.d_h == instance.d else ""
        _fail(where, f"W_Q has shape {w.mid['W_Q'].shape}: d = {w.d}, but the data's tokens have d = "
                     f"{instance.d}{transposed}")
    if readout:
        if not w.has("W_V", "W_O", "W_D"):
            _fail(where, "this statement runs the whole layer: W_V, W_O and W_D are needed")
        if w.skip and w.d_out is not None and w.d_out > w.d:
            _fail(where, f"W_D has d_out = {w.d_out} > d = {w.d}")
