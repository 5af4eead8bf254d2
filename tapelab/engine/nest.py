"""Flatten nested lists / tuples / dicts of tensors and pack results back into the same structure."""


_CONTAINERS = (dict, list, tuple)


def flatten(structure):
    """The leaves of ``structure`` in order (dicts by sorted key, as TF does)."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        if _is_flat(structure):  # (the usual list of sources)
            return list(structure)
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def _is_flat(items):
    """No list, tuple or dict among ``items``."""
    for item in items:
        if isinstance(item, _CONTAINERS):
            return False
    return True


def flatten_up_to(structure, values):
    """Flatten ``values`` only as deep as ``structure`` goes (so a leaf may itself be a list)."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten_up_to(structure[k], values[k])]
    if isinstance(structure, (list, tuple)):
        if len(structure) != len(values):
            raise ValueError(f"expected {len(structure)} values to match the structure, got {len(values)}")
        return [leaf for s, v in zip(structure, values) for leaf in flatten_up_to(s, v)]
    return [values]


def pack_like(structure, leaves):
    """Put ``leaves`` (as returned by :func:`flatten`) back into the shape of ``structure``."""
    if type(structure) in (list, tuple) and _is_flat(structure):
        return type(structure)(leaves)  # a flat list or tuple (not a namedtuple): the usual sources
    return _build(structure, iter(leaves))


def _build(s, it):
    # a module-level function, not a closure calling itself: that would be a reference cycle holding
    # the leaves (the gradients) until the garbage collector runs
    if isinstance(s, dict):
        built = {k: _build(s[k], it) for k in sorted(s)}
        return type(s)((k, built[k]) for k in s)
    if isinstance(s, (list, tuple)):
        items = [_build(x, it) for x in s]
        return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
    return next(it)


def flatten_with_paths(structure, path=""):
    """Like :func:`flatten`, each leaf with where it sits, e.g. ``("['b'][1]", leaf)`` (for error messages)."""
    if isinstance(structure, dict):
        return [p for k in sorted(structure) for p in flatten_with_paths(structure[k], f"{path}[{k!r}]")]
    if isinstance(structure, (list, tuple)):
        return [p for i, item in enumerate(structure) for p in flatten_with_paths(item, f"{path}[{i}]")]
    return [(path, structure)]
