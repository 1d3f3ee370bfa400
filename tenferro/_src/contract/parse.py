"""Parsing einsum subscripts into label tuples.

Two input forms describe the same thing, a list of *terms* (one tuple of labels per operand)
and an optional output term:

* the string form ``"ij,jk->ik"`` (any character except ``, - > .`` and whitespace is a label;
  ``...`` stands for broadcast dimensions; without ``->`` the output is implicit);
* the interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``, where a label is any hashable
  Python object and ``Ellipsis`` (``...``) stands for broadcast dimensions. There is no limit
  on the number of distinct labels.

Parsing is split in two because only the second half needs shapes:

1. ``parse_string`` / ``split_interleaved`` check the syntax and return terms that may contain
   the ``ELLIPSIS`` marker (they depend on the text alone);
2. ``resolve`` expands ``...`` given the operand ranks (broadcast dimensions become
   ``EllipsisDim`` labels, right-aligned as in NumPy), validates the ranks and works out the
   implicit output (broadcast dimensions first, then the labels used exactly once, sorted).

Everything here raises ``ShapeError`` naming the operation and the offending subscripts.
"""

from __future__ import annotations

from collections import Counter

from ..errors import ShapeError

ELLIPSIS = Ellipsis
"""Marker for ``...`` inside a parsed (not yet resolved) term."""

_SPECIAL = set(",->.")


class EllipsisDim:
    """The label of a broadcast dimension: ``k`` counts from the right (0 is the last).

    Right-alignment makes broadcasting work across operands with different numbers of
    broadcast dimensions, exactly as NumPy aligns shapes.
    """

    __slots__ = ("k",)

    def __init__(self, k: int):
        self.k = k

    def __eq__(self, other):
        return type(other) is EllipsisDim and other.k == self.k

    def __hash__(self):
        return hash(("tenferro.EllipsisDim", self.k))

    def __repr__(self):
        return f"...[{-1 - self.k}]"


def label_name(label) -> str:
    """How a label is shown in error messages."""
    if type(label) is EllipsisDim:
        return f"broadcast dimension {-1 - label.k} of '...'"
    return repr(label)


def parse_string(op: str, subscripts: str):
    """``"ij,jk->ik"`` -> ``([("i", "j"), ("j", "k")], ("i", "k"))`` (output None: implicit)."""
    s = "".join(subscripts.split())
    if s.count("->") > 1:
        raise ShapeError(f"{op}: subscripts {subscripts!r} contain '->' more than once.")
    if "->" in s:
        lhs, rhs = s.split("->")
    else:
        lhs, rhs = s, None
    terms = [_parse_term(op, subscripts, t) for t in lhs.split(",")]
    out = None if rhs is None else _parse_term(op, subscripts, rhs, output=True)
    return terms, out


def _parse_term(op, subscripts, term, output=False):
    labels = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i : i + 3] != "...":
                raise ShapeError(
                    f"{op}: invalid subscripts {subscripts!r}: '.' is only allowed as part of "
                    f"an ellipsis '...'."
                )
            labels.append(ELLIPSIS)
            i += 3
            continue
        if c in _SPECIAL:
            where = "output" if output else "input"
            raise ShapeError(
                f"{op}: invalid character {c!r} in the {where} subscripts of {subscripts!r}; "
                f"write 'ab,bc->ac' (',' between operands, one '->' before the output)."
            )
        labels.append(c)
        i += 1
    if labels.count(ELLIPSIS) > 1:
        raise ShapeError(f"{op}: term {term!r} of {subscripts!r} has more than one '...'.")
    return tuple(labels)


def split_interleaved(op: str, args):
    """``(a, [0, 1], b, [1, 2], [0, 2])`` -> operands, terms, output (``None`` if implicit)."""
    args = list(args)
    if len(args) < 2:
        raise ShapeError(
            f"{op}: the interleaved form needs operand, sublist pairs, e.g. "
            f"{op}(a, [0, 1], b, [1, 2], [0, 2]); got {len(args)} argument(s)."
        )
    out = None
    if len(args) % 2:
        out = _sublist(op, args.pop(), "the output sublist")
    operands = args[0::2]
    terms = [_sublist(op, s, f"the sublist of operand {k}") for k, s in enumerate(args[1::2])]
    return operands, terms, out


def _sublist(op, s, what):
    if isinstance(s, (str, bytes)) or not isinstance(s, (list, tuple)):
        raise ShapeError(
            f"{op}: {what} must be a list of labels (e.g. [0, 1] or ['left', 'phys']), got "
            f"{type(s).__name__}. In the interleaved form operands and sublists alternate."
        )
    labels = tuple(s)
    for lab in labels:
        try:
            hash(lab)
        except TypeError:
            raise ShapeError(
                f"{op}: labels must be hashable; {what} contains {lab!r} "
                f"({type(lab).__name__})."
            ) from None
    if labels.count(ELLIPSIS) > 1:
        raise ShapeError(f"{op}: {what} {list(s)!r} has more than one Ellipsis.")
    return labels


def resolve(op: str, terms, output, shapes, text: str):
    """Expand ``...`` using the operand ranks; return (input label tuples, output labels)."""
    if len(terms) != len(shapes):
        raise ShapeError(
            f"{op}: subscripts {text} describe {len(terms)} operand(s) but {len(shapes)} "
            f"were given; give one comma-separated term per operand."
        )
    inputs = []
    n_ell = 0
    any_ell = False
    for k, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
        nd = len(shape)
        if ELLIPSIS in term:
            any_ell = True
            named = len(term) - 1
            if named > nd:
                raise ShapeError(
                    f"{op}: operand {k} has shape {tuple(shape)} (rank {nd}) but its subscripts "
                    f"name {named} indices besides '...' ({text})."
                )
            e = nd - named
            n_ell = max(n_ell, e)
            p = term.index(ELLIPSIS)
            term = term[:p] + tuple(EllipsisDim(e - 1 - i) for i in range(e)) + term[p + 1 :]
        elif len(term) != nd:
            raise ShapeError(
                f"{op}: operand {k} has shape {tuple(shape)} (rank {nd}) but its subscripts "
                f"name {len(term)} indices ({text}); add '...' to broadcast leading dimensions."
            )
        inputs.append(term)
    ell = tuple(EllipsisDim(n_ell - 1 - i) for i in range(n_ell))
    if output is None:
        counts = Counter(lab for t in inputs for lab in t if type(lab) is not EllipsisDim)
        singles = [lab for lab, c in counts.items() if c == 1]
        try:
            singles = sorted(singles)
        except TypeError:  # labels of mixed types: keep the order of first appearance
            pass
        return inputs, ell + tuple(singles)
    if ELLIPSIS in output:
        p = output.index(ELLIPSIS)
        output = output[:p] + ell + output[p + 1 :]
    elif n_ell and any_ell:
        raise ShapeError(
            f"{op}: the operands have broadcast ('...') dimensions but the output subscripts "
            f"of {text} have no '...'; add '...' to the output (summing over broadcast "
            f"dimensions is ambiguous)."
        )
    seen = set()
    present = {lab for t in inputs for lab in t}
    for lab in output:
        if lab in seen:
            raise ShapeError(
                f"{op}: output index {label_name(lab)} appears more than once in {text}; use "
                f"tenferro.diag_embed to build diagonal outputs."
            )
        seen.add(lab)
        if lab not in present:
            raise ShapeError(
                f"{op}: output index {label_name(lab)} does not appear in any input ({text})."
            )
    return inputs, tuple(output)


def describe_interleaved(terms, out) -> str:
    """The interleaved form as text, for messages."""
    body = ", ".join(repr(list(t)).replace("Ellipsis", "...") for t in terms)
    if out is None:
        return f"sublists {body}"
    return f"sublists {body} -> {repr(list(out)).replace('Ellipsis', '...')}"
