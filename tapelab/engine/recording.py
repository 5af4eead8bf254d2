"""What every op consults when it runs: the recorders active in this thread, the name scope, check-numerics.

This is the engine's lowest layer (it imports no other engine module), so the flow stays one-way:
tensor -> recording, dtypes; primitives -> dtypes, tensor; numerics -> recording, tensor; retention -> primitives,
tensor; backward -> retention, numerics, recording; tape -> backward, retention, recording; the ops -> tape.
Whatever a lower module needs from a higher one is handed down when the higher one loads, never imported back:
here ``display`` (how a tape prints and draws, set by ``tapelab.viz``); and, for a tensor's operators
(``x + y``, ``x[k]``), ``tensor._ops`` (the ops they call, set by ``tapelab.tensor_operators``).

A *recorder* is an object on ``state.recorders``: a ``GradientTape``, or the graph ``tl.function`` is tracing.
:class:`Recorder` is the protocol they implement; every op reaches them through :func:`record`.
"""

import gc
import threading
from types import MappingProxyType


class _State(threading.local):
    """Per-thread switches: tapes recording in this thread never see another thread's ops."""

    def __init__(self):
        self.recorders = []  # the active recorders, innermost last (a tape in stop_recording() is marked paused)
        self.scopes = [""]  # the name_scope paths, innermost (the current one, e.g. "dense_1/") last


state = _State()


class _Switches:
    """Process-wide switches: ``check_numerics`` (tl.debugging turns it on; each op tests it once)."""

    check_numerics = False


switches = _Switches()


class _Display:
    """How a tape shows itself: ``text(tape)`` for ``print(tape)``, ``mimebundle(tape, include, exclude)`` for
    Jupyter. ``tapelab.viz`` fills both in when it loads; until then a tape prints its plain repr."""

    text = None
    mimebundle = None


display = _Display()


class Recorder:
    """What sits on ``state.recorders`` and hears about every op: ``GradientTape``, the ``Graph`` being traced.

    - ``_paused``: True while it records nothing (inside ``tape.stop_recording()``, or while a tape runs its own
      backward pass); ``_record`` is still called then, to note what it needs, and must not record;
    - ``_record(op, inputs, values, out, params, residual)``: primitive ``op`` ran on the tensors ``inputs``
      (whose arrays were ``values``) with keyword ``params`` and made ``out``; ``residual`` is what its forward
      saved for the gradient rules (or None). The recorder keeps what it needs;
    - ``_record_variable(variable)``: a ``tl.Variable`` was just made (a graph being traced notes it);
    - ``_record_assign(variable, how, value, old)``: a Variable changed (``how``: assign, assign_add, assign_sub);
    - ``is_traced_graph``: True for a graph under construction (``tracing_graph()`` finds it).

    The read side, what a picture reads of a recording (``tapelab.viz.tapedata``, through nothing else):

    - ``entries``: the ops recorded, in execution order (``tape.Entry`` records);
    - ``watched``: the tensors gradients can flow from (a tape's watched tensors, a graph's placeholders);
    - ``tracks(tensor)``: whether gradients can flow into ``tensor`` (watched, or computed from watched ones);
    - ``stopped_from``: key -> keys of what it was computed from, for tensors computed inside stop_recording();
    - ``last_backward``: the latest ``gradient()`` call's record (``backward.Backward``), or None;
    - ``placeholders``, ``input_names`` (key -> an input's explicit name): a traced graph's inputs and their
      parameter names; ``holds_values``: False for a traced graph, whose tensors have values only when it runs;
    - ``tensors``: key -> tensor, for a recorder that keeps every tensor it records (a graph; a tape keeps none).
    """

    _paused = False
    is_traced_graph = False

    entries = ()
    watched = ()
    stopped_from = MappingProxyType({})
    last_backward = None
    placeholders = ()
    input_names = MappingProxyType({})
    holds_values = True
    tensors = MappingProxyType({})

    def tracks(self, tensor):
        return False

    def _record(self, op, inputs, values, out, params, residual):
        raise NotImplementedError(f"{type(self).__name__} must implement _record")

    def _record_variable(self, variable):
        pass

    def _record_assign(self, variable, how, value, old):
        pass


def record(op, inputs, values, out, params, residual):
    """Tell every active recorder that ``op`` ran (``tape.run`` calls this for every op; so do ``tl.print`` and
    ``custom_gradient``, whose forward runs its own way)."""
    for recorder in state.recorders:
        recorder._record(op, inputs, values, out, params, residual)


def tracing_graph():
    """The graph ``tl.function`` is tracing right now, or None (eager)."""
    for recorder in state.recorders:
        if recorder.is_traced_graph:
            return recorder
    return None


def note_variable(variable):
    """A tl.Variable was just made: tell a graph being traced (a function may make Variables only once)."""
    for recorder in state.recorders:
        recorder._record_variable(variable)


def note_assign(variable, how, value, old):
    """A Variable changed from ``old`` ("assign", "assign_add" or "assign_sub" ``value``): tell a graph being traced."""
    for recorder in state.recorders:
        recorder._record_assign(variable, how, value, old)


class _FullCollections:
    """Python's full garbage collections, held back while a long tape records (``tape.LONG`` entries and more).

    A full collection walks every long-lived object, and a tape's entries are long-lived objects that never form a
    cycle (each refers only to what came before it), so while a long tape is recorded, each one walks the entries
    recorded so far again: on a chain of 10,000 tiny ops that was the largest part of recording (a median of 5.0
    against 3.5 us per op, ``benchmarks/bench_function.py``). The young generations are collected as usual, so
    short-lived cycles still go at once; the full collections resume, at Python's own thresholds, when the last
    such tape stops recording. (The thresholds are the process's: held for every thread.)
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.holders = 0  # tapes recording now, in every thread
        self.threshold = None  # the third threshold to restore

    def hold(self):
        with self.lock:
            self.holders += 1
            if self.holders == 1:
                young, middle, self.threshold = gc.get_threshold()
                gc.set_threshold(young, middle, 1 << 30)

    def release(self):
        with self.lock:
            self.holders -= 1
            if self.holders == 0:
                young, middle, _ = gc.get_threshold()
                gc.set_threshold(young, middle, self.threshold)


full_collections = _FullCollections()
