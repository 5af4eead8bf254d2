"""The engine: tensors, the table of primitives, the tape and its backward pass, ``tl.function``'s graphs.

It imports nothing above it (not the TF namespaces, not Keras, not the pictures), so it can be read on its own,
bottom up::

    errors, learner         teaching errors, spelled the way the learner's code spells the package
    dtypes, nest            TF's dtypes; nested structures
    recording               what every op consults: the active recorders (the protocol), the name scope,
                            the check-numerics switch
    tensor                  Tensor, Variable, TensorShape
    primitives              the one table: each op's forward, its gradient rules and their formulas
    numerics                check-numerics' errors: which op made a NaN or Inf, and what to do
    retention               what a tape keeps of each op, and how a picture gets the rest back
    backward                the backward walk (the chain rule, op by op) and its record
    tape                    run() (every op goes through it), the record (Entry), GradientTape
    plan                    a traced graph as one straight-line numpy program (what tl.function runs)
    function, custom        tl.function's traced graphs; custom_gradient
    gradcheck               gradients checked against finite differences
"""
