"""The command line's argument checks and optional-library checks."""
