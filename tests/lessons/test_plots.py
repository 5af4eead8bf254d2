"""Live loss curves and progress bars: in a script, and in a real Jupyter kernel."""

import subprocess
import sys
import threading

import numpy as np
import pytest

import tapelab as tl

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_import_tapelab_stays_light():
    code = ("import sys, tapelab; heavy = [m for m in ('matplotlib', 'tqdm', 'ipywidgets', 'IPython') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_loss_plot_in_a_script_saves_a_png_and_leaks_no_figures(tmp_path):
    before = plt.get_fignums()
    path = tmp_path / "curves" / "loss.png"
    plot = tl.plots.LossPlot(display="file", path=path, min_interval=0)
    for step in range(40):
        plot.update(step, loss=tl.constant(1.0 / (step + 1)))
        if step % 10 == 9:
            plot.update(step, test_loss=1.2 / (step + 1), test_accuracy=0.5 + step / 100)
    assert plot.draws == 44 and path.read_bytes().startswith(PNG_MAGIC)
    assert plt.get_fignums() == before  # 44 redraws, still no figure registered with pyplot
    plot.render()
    assert [ax.get_ylabel() for ax in plot._figure.axes] == ["loss", "accuracy"]
    assert [line.get_label().split(":")[0] for line in plot._figure.axes[0].lines] == ["loss", "test_loss"]
    assert plot.history["test_accuracy"] == ([9.0, 19.0, 29.0, 39.0], [0.59, 0.69, 0.79, 0.89])
    plot.close()
    assert plot._figure is None and plt.get_fignums() == before
    with pytest.raises(RuntimeError, match="closed"):
        plot.update(loss=1.0)


def test_loss_plot_throttles_redraws_and_draws_the_final_state_on_close(tmp_path):
    path = tmp_path / "loss.png"
    with tl.plots.LossPlot(display="file", path=path, min_interval=3600) as plot:
        for step in range(100):
            plot.update(loss=np.float32(1 / (step + 1)))
        assert plot.draws == 1  # the first point is drawn at once, then at most once an hour
        first = path.read_bytes()
    assert plot.draws == 2 and path.read_bytes() != first
    assert plot.history["loss"][0] == list(range(100))


def test_loss_plot_validates_its_input(tmp_path):
    plot = tl.plots.LossPlot(display="file", path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="named value"):
        plot.update(3)
    with pytest.raises(ValueError, match="display"):
        tl.plots.LossPlot(display="screen")
    plot.close()
    assert not (tmp_path / "x.png").exists()  # nothing to draw, nothing written


def test_loss_plot_outside_a_notebook_defaults_to_a_png(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with tl.plots.LossPlot() as plot:
        plot.update(loss=1.0)
    assert not plot.notebook and (tmp_path / "loss_curve.png").read_bytes().startswith(PNG_MAGIC)


def test_progress_bar_shows_the_current_loss(capsys):
    pytest.importorskip("tqdm")
    steps = tl.plots.progress(range(5), desc="steps", mininterval=0)
    assert len(steps) == 5
    seen = []
    for step in steps:
        steps.log(loss=tl.constant(2.0 / (step + 1)))
        seen.append(step)
    steps.close()
    err = capsys.readouterr().err
    assert seen == [0, 1, 2, 3, 4]
    assert "steps: 100%" in err and "5/5" in err and "loss=0.4000" in err


def test_progress_bar_over_epochs_without_an_iterable(capsys):
    pytest.importorskip("tqdm")
    with tl.plots.progress(total=3, desc="epoch") as bar:
        for epoch in range(3):
            bar.update()
            bar.log(loss=1.0, acc=0.5 + epoch / 10)
    err = capsys.readouterr().err
    assert "epoch: 100%" in err and "acc=0.7000" in err


def test_progress_bar_over_a_dataset_of_unknown_length_counts_without_an_end(capsys):
    pytest.importorskip("tqdm")
    positive = tl.data.Dataset.range(4).filter(lambda x: x > 0)  # (its length is unknown: len() raises)
    assert [int(x) for x in tl.plots.progress(positive, desc="batches", mininterval=0)] == [1, 2, 3]
    err = capsys.readouterr().err
    assert "batches: 3it" in err


NOTEBOOK_CELL = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import tapelab as tl
plot = tl.plots.LossPlot(min_interval=0)
for step in range(15):
    plot.update(step, loss=1.0 / (step + 1))
plot.close()
print("notebook", plot.notebook, "draws", plot.draws, "figures", plt.get_fignums())
"""


def test_loss_plot_updates_one_output_in_place_in_a_real_kernel():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(NOTEBOOK_CELL))
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    images = [o for o in outputs if o.output_type in ("display_data", "update_display_data")]
    # 16 draws (15 updates + close) went into ONE output, replaced in place (no pile of figures)
    assert len(images) == 1 and "image/png" in images[0].data
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "notebook True draws 16 figures []" in text


def test_docstring_examples_run(monkeypatch, tmp_path):
    import doctest

    pytest.importorskip("tqdm")
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(tl.plots, extraglobs={"tl": tl, "np": np})
    assert result.attempted > 0 and result.failed == 0
    assert (tmp_path / "curve.png").read_bytes().startswith(PNG_MAGIC)


def test_progress_bars_start_no_thread_in_pyodide(monkeypatch, recwarn):
    """Pyodide (JupyterLite) cannot start threads; tqdm's monitor thread would warn on every first bar."""
    auto = pytest.importorskip("tqdm.auto")
    monkeypatch.setattr(auto.tqdm, "monitor_interval", 10)
    monkeypatch.setattr("sys.platform", "emscripten")
    threads = threading.active_count()
    bar = tl.plots.progress(range(3), desc="steps")
    for _ in bar:
        pass
    assert auto.tqdm.monitor_interval == 0 and threading.active_count() == threads
    assert not [w for w in recwarn if "monitor" in str(w.message)]


# --- FlowPlot: each layer's gradient norm over training --------------------------------------------------------
def _deep_model(layers=6):
    tl.random.set_seed(0)
    model = tl.keras.Sequential([tl.keras.layers.Dense(16, activation="sigmoid") for _ in range(layers)]
                                + [tl.keras.layers.Dense(10)])
    model.compile("sgd", tl.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    return model, rng.normal(size=(64, 12)).astype("float32"), np.arange(64) % 10


def test_flow_plot_draws_each_layer_s_gradient_norm_as_gradient_flow_measures_it(tmp_path):
    model, x, y = _deep_model()
    plot = tl.plots.FlowPlot(display="file", path=tmp_path / "flow.png", min_interval=0)
    for step in range(3):
        model.train_step((x[step * 16:(step + 1) * 16], y[step * 16:(step + 1) * 16]))
        plot.update(model.last_tape)
    flow = tl.viz.gradient_flow(model.last_tape)
    layers = [r.scope for r in flow if r.weight_norm is not None]
    assert list(plot.history) == layers and len(layers) == 7
    for scope in layers:
        steps, values = plot.history[scope]
        assert steps == [0, 1, 2] and values[-1] == pytest.approx(flow[scope].weight_norm)
    assert plot.history[layers[0]][1][-1] < plot.history[layers[5]][1][-1] / 100  # the sigmoid stack's fall
    output = tl.plots.FlowPlot(which="output", display="file", path=tmp_path / "out.png")
    output.update(model.last_tape)
    assert output.history[layers[0]][1] == [pytest.approx(flow[layers[0]].output_norm)]
    plot.close()
    assert (tmp_path / "flow.png").read_bytes().startswith(PNG_MAGIC)


def test_fit_flow_true_plots_every_step_and_keeps_the_plot_on_the_history(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (outside a notebook fit's plots are saved as PNGs)
    model, x, y = _deep_model(layers=3)
    history = model.fit(x, y, epochs=2, batch_size=16, verbose=0, flow=True)
    plot = history.flow_plot
    assert isinstance(plot, tl.plots.FlowPlot) and plot.closed and len(plot.history) == 4  # 3 sigmoid + the head
    assert all(steps == [1, 2, 3, 4, 5, 6, 7, 8] for steps, _ in plot.history.values())  # 2 epochs of 4 batches
    assert (tmp_path / "gradient_flow.png").read_bytes().startswith(PNG_MAGIC)
    with pytest.raises(TypeError, match="flow= is True, False or a tl.plots.FlowPlot"):
        model.fit(x, y, verbose=0, flow="yes")


def test_flow_plot_says_what_to_do_with_a_bad_which_and_a_pass_without_layers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (outside a notebook a plot is saved as gradient_flow.png)
    with pytest.raises(ValueError, match="which must be 'weights'.*or 'output'"):
        tl.plots.FlowPlot(which="inputs")
    w = tl.Variable(2.0)
    with tl.GradientTape() as tape:
        loss = w * w
    with pytest.raises(ValueError, match=r"gradient_flow: this tape has no backward pass"):
        tl.plots.FlowPlot(display="file").update(tape)
    tape.gradient(loss, w)
    assert tl.plots.FlowPlot(display="file").update(tape) is None  # (ops outside every scope: one "(no scope)" line)
    assert (tmp_path / "gradient_flow.png").exists()
    x = tl.constant(2.0)
    with tl.GradientTape() as tape:
        tape.watch(x)
        loss = x * x
    tape.gradient(loss, x)
    with pytest.raises(ValueError, match=r"no name scope of this backward pass reads a trainable Variable.*name_scope"):
        tl.plots.FlowPlot(display="file").update(tape)
