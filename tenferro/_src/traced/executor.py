"""The graph executor: a compiled program plus its constants, converted once per backend."""

from __future__ import annotations

from ..core.eager import impl_error
from ..errors import TenferroError
from ..ir.compile import compile_program, failing_eqn
from ..ir.program import Program


class Executable:
    """A compiled program plus its constants, converted once per backend."""

    def __init__(self, program: Program):
        self.program = program
        self.consts = list(program.consts.values())
        self._fns: dict = {}  # backend -> the program compiled (specialised) for its xp
        self._device_consts: dict = {}

    def run(self, backend, values) -> list:
        consts = self._device_consts.get(backend)
        if consts is None:
            consts = self._device_consts[backend] = [
                c if backend.name == "numpy" else backend.asarray(c) for c in self.consts
            ]
        fn = self._fns.get(backend)
        if fn is None:
            fn = self._fns[backend] = compile_program(self.program, backend.xp,
                                                       fuse=backend.name == "numpy")
        try:
            return fn(backend.xp, consts, *values)
        except TenferroError as e:  # already named by the impl: add the user's line
            eqn = failing_eqn(fn, self.program, e.__traceback__)
            if eqn is not None and eqn.source and e.args and isinstance(e.args[0], str) \
                    and "[at " not in e.args[0]:
                e.args = (f"{e.args[0]} [at {eqn.source}]",) + tuple(e.args[1:])
            raise
        except Exception as e:  # wrapped as in eager mode: the op, its operands, the line
            eqn = failing_eqn(fn, self.program, e.__traceback__)
            if eqn is None:
                raise
            err = impl_error(eqn.prim, [v.aval for v in eqn.inputs], eqn.params, backend, e)
            if eqn.source:
                err.args = (f"{err.args[0]} [at {eqn.source}]",)
            raise err from e
