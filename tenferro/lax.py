"""Direct access to every primitive: ``tenferro.lax.<name>(*operands, **params)``.

The NumPy-style functions of ``tenferro`` broadcast, promote and pick parameters for you; these
wrappers apply one primitive exactly as defined in ``chainrules`` (no broadcasting, no
promotion; parameters by keyword), like ``jax.lax``. They work in every mode and are validated
by the primitive's ``abstract_eval``, e.g.::

    tenferro.lax.dot_general(x, y, dimension_numbers=(((1,), (0,)), ((), ())))
    tenferro.lax.slice(x, start_indices=(0, 1), limit_indices=(2, 4), strides=(1, 2))
    tenferro.lax.pad(x, tenferro.tensor(0.0), padding_config=((1, 0, 0), (0, 2, 1)))
"""

from tenferro._src import lax as _lax


def __getattr__(name: str):
    if name == "__all__":
        return _lax.primitive_names()
    fn = _lax.primitive_function(name)
    globals()[name] = fn
    return fn


def __dir__() -> list[str]:
    return _lax.primitive_names()
