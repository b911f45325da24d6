"""Executables of threads=2 modules created, called and destroyed many
times in one process: each runner waits for its async tasks, then destroys
its JIT'ed code (lib/Execution/AsyncTasks.h), and the buffers its calls
returned come from its buffer cache (BufferCache.h). A task still running
through unmapped code, or a buffer freed into the wrong allocator, crashes
the process."""

import gc

import numpy as np

import tx

T = 700  # large enough for buffers of the cache (>= 128 KiB)


def test_threaded_runners_come_and_go(llama_text):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((T, 64)).astype(np.float32)
    angles = rng.standard_normal((T, 8)).astype(np.float32)
    args = (x, np.cos(angles), np.sin(angles))
    reference, = tx.Module.parse(llama_text).compile_cpu(seed=3).invoke(
        "forward", *args)
    module = tx.Module.parse(llama_text)
    for _ in range(6):
        exe = module.compile_cpu(pipeline="tx-to-cpu{threads=2}", seed=3)
        for _ in range(2):
            y, = exe.invoke("forward", *args)
            # Bit-identical to one thread, call after call.
            np.testing.assert_array_equal(y, reference)
        del exe
        gc.collect()
