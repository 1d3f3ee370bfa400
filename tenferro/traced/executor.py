"""The graph executor: a compiled program plus its constants, converted once per backend."""

from __future__ import annotations

from ..ir.compile import compile_program
from ..ir.program import Program


class Executable:
    """A compiled program plus its constants, converted once per backend."""

    def __init__(self, program: Program):
        self.program = program
        self.consts = list(program.consts.values())
        self._fn = compile_program(program)
        self._device_consts: dict = {}

    def run(self, backend, values) -> list:
        consts = self._device_consts.get(backend)
        if consts is None:
            consts = self._device_consts[backend] = [
                c if backend.name == "numpy" else backend.asarray(c) for c in self.consts
            ]
        return self._fn(backend.xp, consts, *values)
