"""Tracebacks in IPython and Jupyter: a tapelab error shows the learner's lines and the message without the
frames inside tapelab it was raised from (:func:`install_ipython_tracebacks`): a learner reads a traceback from
the top."""

import builtins
import os
import sys
import sysconfig
import types

from tapelab.engine.learner import HOME

_GROUPS = getattr(builtins, "BaseExceptionGroup", ())  # (Python >= 3.11)
# the standard library and installed packages: code tapelab calls on its way (numpy's errstate wraps the backward
# pass) is part of tapelab's frames, but never a learner's function that tapelab calls back
_LIBRARIES = tuple({os.path.join(path, "") for name, path in sysconfig.get_paths().items()
                    if name in ("stdlib", "platstdlib", "purelib", "platlib")})


def trim_traceback(tb):
    """``(shown, hidden)``: traceback ``tb`` without the frames inside tapelab at its end, and how many it dropped.

    Those frames are the trailing run of frames in tapelab's own files, with library code tapelab called in
    between. ``(tb, 0)`` when the innermost frame is not tapelab's: an error in the learner's code, also one raised
    in a function tapelab called back (a ``tf.function``, a layer's ``call``), keeps every frame.

    >>> try:
    ...     tl.matmul(tl.ones((3, 2)), tl.ones((4, 3)))
    ... except tl.errors.InvalidArgumentError as err:
    ...     shown, hidden = trim_traceback(err.__traceback__)
    >>> shown.tb_frame.f_code.co_filename, shown.tb_next, hidden > 0
    ('<doctest tapelab.lessons.tracebacks.trim_traceback[0]>', None, True)
    """
    entries, entry = [], tb
    while entry is not None:
        entries.append(entry)
        entry = entry.tb_next
    files = [t.tb_frame.f_code.co_filename for t in entries]
    if not files or not files[-1].startswith(HOME):
        return tb, 0
    kept = len(entries)
    while kept and files[kept - 1].startswith((HOME, *_LIBRARIES)):
        kept -= 1
    while not files[kept].startswith(HOME):  # library code the learner called (stops at the innermost frame)
        kept += 1
    shown = None  # a traceback is a linked list from the outermost frame: rebuild it from its new innermost end
    for entry in reversed(entries[:kept]):
        shown = types.TracebackType(shown, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return shown, len(entries) - kept


def _chain(value):
    """The exceptions ``value`` was raised from or while handling, in the order IPython shows them above it."""
    seen = {id(value)}
    while True:
        value = value.__cause__ or (None if value.__suppress_context__ else value.__context__)
        if value is None or id(value) in seen:
            return
        seen.add(id(value))
        yield value


def learner_traceback(shell, etype, value, tb, tb_offset=None):
    """The structured traceback (a list of str) IPython's ``shell`` shows for an exception raised inside tapelab,
    without tapelab's trailing frames and with a line saying how many it hid; ``None`` when there is nothing to
    hide, or when IPython is asked for every frame (``%xmode Verbose``, ``%xmode --show``) or formats this
    exception its own way (syntax errors, exception groups, ``_render_traceback_``)."""
    formatter = shell.InteractiveTB
    if formatter.mode not in ("Plain", "Context") or not formatter.skip_hidden or issubclass(etype, SyntaxError):
        return None
    chained = list(_chain(value))
    if hasattr(value, "_render_traceback_") or any(isinstance(e, _GROUPS) for e in [value, *chained]):
        return None
    shown, hidden = trim_traceback(tb)
    if not hidden or shown is None:
        return None
    # IPython reads a chained exception's frames from its __traceback__: trim those for the formatting only,
    # the exceptions keep theirs (%debug, and the post-mortem of each exception in the chain)
    saved = [(e, e.__traceback__) for e in chained]
    try:
        for e, etb in saved:
            e.__traceback__, more = trim_traceback(etb)
            hidden += more
        stb = formatter.structured_traceback(etype, value, shown, tb_offset=tb_offset)
    finally:
        for e, etb in saved:
            e.__traceback__ = etb
    formatter.tb = tb  # (it keeps the traceback it formatted for %pdb: the full one, as without this function)
    # the note goes where the hidden frames were: just above the message (else at the end, if IPython changed)
    message = (formatter.get_exception_only(etype, value) if formatter.mode == "Plain"
               else formatter.format_exception(etype.__name__, value))
    at = len(stb) - len(message) if stb[-len(message):] == message else len(stb)
    s = "s" if hidden > 1 else ""
    stb.insert(at, f"    [... {hidden} frame{s} inside tapelab hidden: %tb or %xmode Verbose shows every frame]\n")
    return stb


def _show_traceback(shell, etype, value, tb, tb_offset=None):
    """The shell's custom exception handler (``set_custom_exc``): a tapelab error as :func:`learner_traceback`
    writes it, anything else exactly as IPython shows it without a handler."""
    try:
        stb = learner_traceback(shell, etype, value, tb, tb_offset)
    except Exception:  # a traceback must never cost the learner the session: IPython formats it instead
        stb = None
    if stb is not None:
        shell._get_exc_info((etype, value, tb))  # sets sys.last_traceback, the full one: %debug goes into tapelab
        shell._showtraceback(etype, value, stb)
        if shell.call_pdb:
            shell.debugger(force=True)
    elif tb is not None and tb.tb_frame.f_code.co_name == "run_code":  # raised running the cell
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
    elif issubclass(etype, IndentationError):  # the cell did not parse: IPython asks a handler for that too
        shell.showindentationerror()
    else:
        shell.showsyntaxerror()


def install_ipython_tracebacks():
    """In IPython or Jupyter, show tapelab's errors with :func:`learner_traceback`. Outside IPython this does
    nothing (a script keeps Python's tracebacks), and it leaves a shell that has a custom exception handler
    alone: someone else's, or this one after ``import tapelab`` ran before in the kernel."""
    ipython = sys.modules.get("IPython")  # (a plain script never imported IPython, and this does not import it)
    shell = getattr(ipython, "get_ipython", lambda: None)()
    if shell is not None and getattr(shell, "custom_exceptions", None) == ():
        # (Exception,): KeyboardInterrupt and SystemExit are BaseExceptions and keep IPython's own handling
        shell.set_custom_exc((Exception,), _show_traceback)
