"""Runs: one command, one or more kernels or schedulers, results kept.
A/B sweeps, suites, side by side, the arm64 guest, stress, two-variant
comparisons, host mode, and collecting a run into results/."""
