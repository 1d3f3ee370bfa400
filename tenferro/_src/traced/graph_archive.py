"""The container of a graph file: a zip of ``.npy`` entries, read with every size checked
*before* anything is decompressed or allocated (see design/graph-files.md).

The zip's central directory states each entry's decompressed size; entries are refused when
their names are unexpected, they are encrypted or use an unusual compression, or their stated
size is over a limit or does not match what the graph declares. Reads never go past the
stated size (and the zip's CRC check catches data that disagrees with it).
"""

from __future__ import annotations

import re
import zipfile

import numpy as np

from chainrules.params import DTYPES

JSON_ENTRY = "graph.json.npy"
_CONST_ENTRY = re.compile(r"(call_)?const_(0|[1-9][0-9]{0,8})\.npy")
NPY_HEADER_MAX = 10_000
"""Largest ``.npy`` header read (NumPy's own default limit for untrusted files)."""
_NPY_OVERHEAD = 12 + NPY_HEADER_MAX  # magic, version, header length, header
_CHUNK = 1 << 24


class ArchiveError(Exception):
    """Internal: the archive is not acceptable (the loader turns it into GraphFormatError)."""


class Archive:
    """The entries of an open graph file, checked against the central directory."""

    def __init__(self, fileobj):
        self.zip = zipfile.ZipFile(fileobj)
        self.json_info = None
        self.const_infos: dict[int, zipfile.ZipInfo] = {}
        self.call_const_infos: dict[int, zipfile.ZipInfo] = {}  # constants of call programs
        seen = set()
        for info in self.zip.infolist():
            name = info.filename
            if name in seen:
                raise ArchiveError(f"the archive holds the entry {name!r} twice")
            seen.add(name)
            if info.flag_bits & 0x1:
                raise ArchiveError(f"the entry {name!r} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise ArchiveError(
                    f"the entry {name!r} uses compression method {info.compress_type}; graph "
                    f"files are stored or deflated"
                )
            m = _CONST_ENTRY.fullmatch(name)
            if name == JSON_ENTRY:
                self.json_info = info
            elif m:
                infos = self.call_const_infos if m.group(1) else self.const_infos
                infos[int(m.group(2))] = info
            else:
                raise ArchiveError(
                    f"unexpected entry {name!r} (a graph file holds {JSON_ENTRY}, "
                    f"const_<i>.npy and call_const_<i>.npy only)"
                )
        if self.json_info is None:
            raise ArchiveError(f"the archive has no {JSON_ENTRY} entry")

    def close(self):
        self.zip.close()

    def read_json(self, max_bytes: int) -> bytes:
        """The graph description: a 1-d uint8 ``.npy`` of at most ``max_bytes`` bytes."""
        info = self.json_info
        if info.file_size > max_bytes + _NPY_OVERHEAD:
            raise ArchiveError(
                f"{JSON_ENTRY} is {info.file_size} bytes decompressed; the limit is "
                f"{max_bytes} (MAX_JSON_BYTES)"
            )
        with self.zip.open(info) as fp:
            shape, _, dtype = _read_header(fp, JSON_ENTRY)
            if dtype != np.dtype(np.uint8) or len(shape) != 1:
                raise ArchiveError(f"{JSON_ENTRY} must be a 1-d uint8 array, not {dtype}{shape}")
            if shape[0] > max_bytes:
                raise ArchiveError(
                    f"{JSON_ENTRY} is {shape[0]} bytes; the limit is {max_bytes} (MAX_JSON_BYTES)"
                )
            return _read_exact(fp, np.empty(shape[0], np.uint8), JSON_ENTRY).tobytes()

    def check_consts(self, count: int, call: bool = False) -> None:
        """Exactly the entries ``const_0 .. const_{count-1}`` (``call_const_...`` for the
        constants of custom-rule calls)."""
        infos, prefix = self._entries(call)
        extra = sorted(i for i in infos if i >= count)
        if extra:
            raise ArchiveError(
                f"the archive holds {prefix}{extra[0]}.npy but the graph declares only {count} "
                f"such constants"
            )
        missing = [i for i in range(count) if i not in infos]
        if missing:
            raise ArchiveError(f"the archive has no entry {prefix}{missing[0]}.npy")

    def _entries(self, call: bool):
        return (self.call_const_infos, "call_const_") if call else (self.const_infos, "const_")

    def read_const(self, i: int, shape: tuple, dtype: np.dtype, call: bool = False) -> np.ndarray:
        """Constant ``i``, which must have exactly the declared ``shape`` and ``dtype``."""
        infos, prefix = self._entries(call)
        name = f"{prefix}{i}.npy"
        info = infos[i]
        count = 1
        for d in shape:
            count *= d
        nbytes = count * dtype.itemsize
        if not nbytes <= info.file_size <= nbytes + _NPY_OVERHEAD:
            raise ArchiveError(
                f"{name} is {info.file_size} bytes decompressed, but a {dtype.name} array of "
                f"shape {shape} needs {nbytes} bytes plus a header"
            )
        with self.zip.open(info) as fp:
            got_shape, fortran, got_dtype = _read_header(fp, name)
            if got_dtype != dtype or got_shape != shape:
                raise ArchiveError(
                    f"{name} holds a {got_dtype.str} array of shape {got_shape}; the graph "
                    f"declares {dtype.name} of shape {shape}"
                )
            flat = _read_exact(fp, np.empty(count, dtype), name)
        if fortran:
            return flat.reshape(shape[::-1]).T
        return flat.reshape(shape)


_HEADER_FIELD = re.compile(r"'(descr|fortran_order|shape)'\s*:\s*"
                           r"(?:'([^']*)'|(True|False)|\(([0-9,\s]*)\))\s*,?\s*")


def _read_header(fp, name):
    """The (shape, fortran order, dtype) of a .npy entry, parsed strictly without ``ast``:
    NumPy's own parser uses ``ast``, which is not thread-safe in CPython 3.11 (concurrent
    loads failed with "AST constructor recursion depth mismatch"), and a graph file's headers
    are always the three-key literal ``np.save`` writes."""
    magic = fp.read(8)
    if len(magic) != 8 or magic[:6] != b"\x93NUMPY":
        raise ArchiveError(f"{name} is not a .npy entry")
    major = magic[6]
    if major not in (1, 2):
        raise ArchiveError(f"{name} uses .npy format version {major}; expected 1 or 2")
    size_bytes = fp.read(2 if major == 1 else 4)
    if len(size_bytes) != (2 if major == 1 else 4):
        raise ArchiveError(f"{name} has a truncated .npy header")
    size = int.from_bytes(size_bytes, "little")
    if size > NPY_HEADER_MAX:
        raise ArchiveError(f"{name} has a .npy header of {size} bytes (limit {NPY_HEADER_MAX})")
    raw = fp.read(size)
    if len(raw) != size:
        raise ArchiveError(f"{name} has a truncated .npy header")
    text = raw.decode("latin1").strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise ArchiveError(f"{name} has a malformed .npy header")
    fields, pos, body = {}, 0, text[1:-1].strip()
    while pos < len(body):
        m = _HEADER_FIELD.match(body, pos)
        if m is None or m.group(1) in fields:
            raise ArchiveError(f"{name} has a malformed .npy header")
        fields[m.group(1)] = m.group(2) if m.group(2) is not None else (
            m.group(3) if m.group(3) is not None else m.group(4))
        pos = m.end()
    if set(fields) != {"descr", "fortran_order", "shape"} or fields["fortran_order"] not in (
            "True", "False"):
        raise ArchiveError(f"{name} has a malformed .npy header")
    try:
        dtype = np.dtype(fields["descr"])
        parts = [p.strip() for p in fields["shape"].split(",")]
        shape = tuple(int(p) for p in parts if p)
    except (TypeError, ValueError) as e:
        raise ArchiveError(f"{name} has a malformed .npy header ({e})") from None
    if DTYPES.get(dtype.name) != dtype:
        raise ArchiveError(f"{name} holds an array of unsupported dtype {dtype.str!r}")
    return shape, fields["fortran_order"] == "True", dtype


def _read_exact(fp, out: np.ndarray, name: str) -> np.ndarray:
    """Fill ``out`` from ``fp`` in bounded chunks; the entry must end exactly there."""
    view = memoryview(out.reshape(-1).view(np.uint8))
    pos = 0
    while pos < len(view):
        chunk = fp.read(min(_CHUNK, len(view) - pos))
        if not chunk:
            raise ArchiveError(f"{name} ends after {pos} of {len(view)} data bytes")
        view[pos:pos + len(chunk)] = chunk
        pos += len(chunk)
    if fp.read(1):
        raise ArchiveError(f"{name} has data after its declared end")
    return out
