"""The intermediate representation: straight-line programs of primitive applications.

Programs serve three clients: the derivative templates the tape compiles from primitive rules,
the linear maps of ``linearize``/``linear_transpose``, and the graphs of traced mode.

* ``program``: ``Var``, ``Eqn``, ``Program`` and ``IRBuilder`` (a Builder that records);
* ``eval``: the one interpreter (``eval_program``), with run-time (symbolic) sizes;
* ``compile``: a program as straight-line Python calling the ``impl``s, freeing at last use;
* ``transpose``: reverse mode's core, transposing the linear part of a program;
* ``passes``: graph optimisations (shape folding, constant folding, CSE, DCE, liveness);
* ``cost``: FLOP and byte estimates per equation.
"""
