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
