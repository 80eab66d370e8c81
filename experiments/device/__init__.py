"""Running folds and benchmarks on a GPU machine without internet access (see README.md here)."""
