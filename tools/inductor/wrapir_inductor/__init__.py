"""wrapir_inductor: exports what PyTorch Inductor generates into wrapir's
program JSON, with its kernels and example tensors, and checks wrapir's
paths against eager. See docs/inductor-bridge.md."""

__version__ = "0.1.0"
