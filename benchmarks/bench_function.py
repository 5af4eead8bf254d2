"""Eager vs traced: seed 001's linear-regression training step, both ways, in the same run.

    .venv/bin/python benchmarks/bench_function.py

Times 200 steps (1,000 samples, plain gradient descent) eagerly and through ``tl.function`` (traced
once, then replayed), best of 5, and checks that both end with the same W and B.
"""

import time

import tapelab as tl


def make_step():
    def step(W, B, x, y, lr):
        with tl.GradientTape() as tape:
            loss = tl.reduce_mean(tl.square(x * W + B - y))
        dW, dB = tape.gradient(loss, [W, B])
        W.assign_sub(dW * lr)
        B.assign_sub(dB * lr)
        return loss
    return step


W, B = tl.Variable(5.0), tl.Variable(10.0)  # the same Variables every run, so the trace is reused


def train(step, x, y, steps=200):
    W.assign(5.0)
    B.assign(10.0)
    start = time.perf_counter()
    for _ in range(steps):
        step(W, B, x, y, 0.01)
    return time.perf_counter() - start, float(W), float(B)


def main():
    tl.random.set_seed(0)
    x = tl.random.normal([1000])
    y = x * 5 + 2
    eager, traced_fn = make_step(), tl.function(make_step())
    traced_fn(W, B, x, y, 0.01)  # trace outside the timing
    t_eager = min(train(eager, x, y) for _ in range(5))
    t_traced = min(train(traced_fn, x, y) for _ in range(5))
    assert t_eager[1:] == t_traced[1:], (t_eager, t_traced)
    assert traced_fn.trace_count == 1
    print(f"linear regression, 200 steps: eager {t_eager[0] * 1e3:.1f} ms ({t_eager[0] / 200 * 1e6:.0f} us/step), "
          f"traced {t_traced[0] * 1e3:.1f} ms ({t_traced[0] / 200 * 1e6:.0f} us/step): traced/eager = "
          f"{t_traced[0] / t_eager[0]:.2f}; same final W, B = {t_eager[1]:.4f}, {t_eager[2]:.4f}")


if __name__ == "__main__":
    main()
