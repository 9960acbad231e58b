"""Local stand-ins of the vendors' HTTP APIs, for running the real agent CLIs in the tests."""
