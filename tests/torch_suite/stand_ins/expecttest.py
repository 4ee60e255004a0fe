"""A stand-in for the `expecttest` package, which torch's test helpers import
(torch.testing._internal.common_utils: `class TestCase(expecttest.TestCase)`, `expecttest.ACCEPT`)
and which neither Debian nor the registries reachable here package. torch_suite.py puts this
folder on sys.path only when the real package is missing. The distributed tests never compare
against inline expected text, so the one method that would is refused rather than imitated."""

import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802 (expecttest's name)
        raise NotImplementedError(
            "tests/torch_suite/stand_ins/expecttest.py: assertExpectedInline needs the real "
            "expecttest package")
