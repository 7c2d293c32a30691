"""TEIR's example records, installed as the data package `teir_examples`.

Only JSON lives here; `teir-run --example NAME` and `--list-examples` read it
through importlib.resources (teir_tools.examples). This file makes the folder a
regular package, which importlib.resources reads the same way in editable and
ordinary installs.
"""
