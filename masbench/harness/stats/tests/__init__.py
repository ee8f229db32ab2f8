"""Fixed-n paired tests of a mean per-task difference, one module per test behind :mod:`.base`.

The suite's ``stats.test`` names one (:data:`masbench.registry.PAIRED_TESTS`, checked when the
suite is loaded); every test returns a :class:`~.base.TestResult` with the same contract:
``mean``, ``sd``, ``n``, a two-sided ``p_value`` and ``ci(level)``, and ``p_value < a`` exactly
when ``ci(1 − a)`` excludes 0 (how each test makes that hold: its module docstring).

- ``sign-flip`` (default, :mod:`.sign_flip`): the paired randomization test on the signs of the
  per-task differences; exact (integer convolution) when the differences lie on a lattice —
  exact McNemar, clustered by task, for 0/1 outcomes.
- ``student-t`` (:mod:`.student_t`): the one-sample t-test with n − 1 degrees of freedom.
- ``bootstrap-t`` (:mod:`.bootstrap_t`): the earlier rule (studentized bootstrap with two ±1
  pseudo-tasks), kept for comparison; ``bootstrap-t-plain`` is the same without pseudo-tasks.
"""

from .base import PairedTest, TestResult, get_test

__all__ = ["PairedTest", "TestResult", "get_test"]
