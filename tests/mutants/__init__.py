"""Mutation checks of the quality tests (run by ``make mutants``, not collected as tests).

Each mutant is a pytest plugin that breaks the suite in one way an attack or a defense could be
wrong, and lists the quality tests that must catch it (``TARGETS``). ``python -m tests.mutants``
runs every target under each mutant and fails unless every one of them fails its assertions.
"""
